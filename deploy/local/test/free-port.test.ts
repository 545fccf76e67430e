import net from "node:net";
import fs from "node:fs";
import { freePort, freePortForLater, freePortsForLater, isPortFree, portFreeSoon, RESERVED_PORTS } from "../src/free-port";

function listen(port = 0): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen({ port, host: "127.0.0.1" }, () => resolve(server));
  });
}
const close = (server: net.Server) => new Promise<void>((resolve) => server.close(() => resolve()));
const portOf = (server: net.Server) => (server.address() as net.AddressInfo).port;

describe("freePort", () => {
  test("never hands out 5432 or 4222, even when asked for them", async () => {
    expect(RESERVED_PORTS.has(5432)).toBe(true);
    expect(RESERVED_PORTS.has(4222)).toBe(true);
    expect(await freePort(5432)).not.toBe(5432);
    expect(await freePort(4222)).not.toBe(4222);
    const ports = await Promise.all(Array.from({ length: 50 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThan(0);
      expect(RESERVED_PORTS.has(port)).toBe(false);
    }
  });

  test("returns the preferred port when it is free", async () => {
    const server = await listen();
    const port = portOf(server);
    await close(server);
    expect(await freePort(port)).toBe(port);
  });

  test("falls back to another free port when the preferred one is taken", async () => {
    const server = await listen();
    const taken = portOf(server);
    try {
      expect(await isPortFree(taken)).toBe(false);
      const port = await freePort(taken);
      expect(port).not.toBe(taken);
      expect(await isPortFree(port)).toBe(true);
    } finally {
      await close(server);
    }
  });

  test("ignores preferred values that are not ports", async () => {
    for (const preferred of [0, -1, 70000, 1.5, Number.NaN]) {
      const port = await freePort(preferred);
      expect(Number.isInteger(port) && port > 0 && port <= 65535).toBe(true);
      expect(port).not.toBe(preferred);
    }
  });
});

describe("portFreeSoon", () => {
  test("is false at once when something listens on the port, however long it may wait", async () => {
    const holder = await listen();
    try {
      const started = Date.now();
      expect(await portFreeSoon(portOf(holder), 10_000)).toBe(false);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await close(holder);
    }
  });

  test("waits for a port nobody listens on that refuses binds (a closed connection's local end) until it frees, saying so once", async () => {
    const answers = [false, false, true];
    const probes = { isFree: async () => answers.shift()!, isListening: async () => false };
    let told = 0;
    expect(await portFreeSoon(50052, 5000, () => void told++, 10, probes)).toBe(true);
    expect(told).toBe(1);
    expect(answers).toEqual([]);
  });

  test("gives up on such a port after waitMs", async () => {
    const probes = { isFree: async () => false, isListening: async () => false };
    const started = Date.now();
    expect(await portFreeSoon(50052, 300, undefined, 50, probes)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });
});

describe("freePortForLater", () => {
  test("hands out free ports below the kernel's range for outgoing connections", async () => {
    const [low] = fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePortForLater()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10000);
      expect(port).toBeLessThan(low);
      expect(RESERVED_PORTS.has(port)).toBe(false);
    }
    const server = await listen(ports[0]); // and it can be bound
    expect(portOf(server)).toBe(ports[0]);
    await close(server);
  });
});

describe("freePortsForLater", () => {
  test("hands out as many ports as asked, no two the same", async () => {
    const ports = await freePortsForLater(40);
    expect(ports).toHaveLength(40);
    expect(new Set(ports).size).toBe(40);
  });
});
