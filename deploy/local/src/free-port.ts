import fs from "node:fs";
import net from "node:net";

/**
 * Ports the launcher never hands out: a machine may already run its own Postgres (5432) and
 * NATS (4222) there, and the embedded servers must not collide with (or be mistaken for) them.
 */
export const RESERVED_PORTS: ReadonlySet<number> = new Set([5432, 4222]);

const HOST = "127.0.0.1";

/** True when nothing listens on `port` of 127.0.0.1 (checked by binding it for a moment). */
export function isPortFree(port: number, host: string = HOST): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => {
      server.close(() => resolve(true));
    });
  });
}

/** True when something accepts connections on `port` of 127.0.0.1. */
export function isListening(port: number, host: string = HOST): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.setTimeout(1000, () => (socket.destroy(), resolve(false)));
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

export interface PortProbes {
  isFree(port: number): Promise<boolean>;
  isListening(port: number): Promise<boolean>;
}

const LOCAL_PROBES: PortProbes = { isFree: (port) => isPortFree(port), isListening: (port) => isListening(port) };

/**
 * True when `port` is free, or becomes free within `waitMs`; false at once when something listens
 * on it. A port nobody listens on can still refuse a bind: the local end of an outgoing connection
 * holds it (after the connection closed, for TIME_WAIT's 60 s), which happens to ports inside the
 * kernel's ephemeral range. That is waited for, calling `onWait` once first.
 */
export async function portFreeSoon(port: number, waitMs: number, onWait?: () => void, pollMs = 500, probes: PortProbes = LOCAL_PROBES): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  let waiting = false;
  for (;;) {
    if (await probes.isFree(port)) return true;
    if (Date.now() >= deadline || (await probes.isListening(port))) return false;
    if (!waiting) onWait?.();
    waiting = true;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

function ephemeralPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once("error", reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("could not determine a free port"))));
    });
  });
}

/**
 * A TCP port free on 127.0.0.1: `preferred` when it is a valid, non-reserved port that is free
 * right now, otherwise one the operating system picks. Never 5432 or 4222.
 */
export async function freePort(preferred?: number, host: string = HOST): Promise<number> {
  if (
    preferred !== undefined &&
    Number.isInteger(preferred) &&
    preferred > 0 &&
    preferred <= 65535 &&
    !RESERVED_PORTS.has(preferred) &&
    (await isPortFree(preferred, host))
  ) {
    return preferred;
  }
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await ephemeralPort(host);
    if (!RESERVED_PORTS.has(port)) return port;
  }
  throw new Error("could not find a free port");
}

/** The lowest local port the kernel gives outgoing connections (Linux), or the IANA default elsewhere. */
function lowestEphemeralPort(): number {
  try {
    const [low, high] = fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    if (low > 0 && high >= low) return low;
  } catch {
    // not Linux
  }
  return 49152;
}

const LOWEST_PICKED = 10000;

/**
 * A free TCP port for a server that binds it later, after other work: picked below the kernel's
 * ephemeral range, because a port from that range can meanwhile become the local port of some
 * outgoing connection (then the bind fails with EADDRINUSE). Falls back to {@link freePort} when the
 * range leaves no room below it.
 */
export async function freePortForLater(host: string = HOST): Promise<number> {
  const highest = lowestEphemeralPort() - 1;
  for (let attempt = 0; highest > LOWEST_PICKED && attempt < 100; attempt++) {
    const port = LOWEST_PICKED + Math.floor(Math.random() * (highest - LOWEST_PICKED + 1));
    if (!RESERVED_PORTS.has(port) && (await isPortFree(port, host))) return port;
  }
  return freePort(undefined, host);
}

/**
 * `count` distinct ports, each picked as {@link freePortForLater} picks one. None is bound yet when
 * the next is picked, so without this one port could be handed out twice.
 */
export async function freePortsForLater(count: number, host: string = HOST): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePortForLater(host));
  return [...ports];
}
