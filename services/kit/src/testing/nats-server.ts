/** A private nats-server child process that a test can stop and restart on the same port and store. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const NATS_SERVER_BIN = process.env.NATS_SERVER_BIN || "/usr/sbin/nats-server";

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** nats-server with JetStream on a fixed port and store directory. */
export class PrivateNatsServer {
  private child: ChildProcess | undefined;
  readonly storeDir = mkdtempSync(path.join(os.tmpdir(), "kit-nats-"));

  private constructor(
    readonly port: number,
    private extraArgs: string[],
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Kills the server and starts it again on the same port and store with other flags. */
  async restartWith(extraArgs: string[]): Promise<void> {
    await this.kill();
    this.extraArgs = extraArgs;
    await this.start();
  }

  /**
   * @param extraArgs more nats-server flags (e.g. `--user u --pass p`, or `-c <file>`)
   * @param env more environment of the server (variables its configuration file names)
   */
  static async start(extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<PrivateNatsServer> {
    const server = new PrivateNatsServer(await freePort(), extraArgs, env);
    await server.start();
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts (or restarts) the server and waits until it accepts connections. */
  async start(): Promise<void> {
    if (this.child) throw new Error("nats-server already running");
    const child = spawn(NATS_SERVER_BIN, ["-js", "-a", "127.0.0.1", "-p", String(this.port), "-sd", this.storeDir, ...this.extraArgs], {
      stdio: "ignore",
      env: { ...process.env, ...this.env },
    });
    this.child = child;
    const deadline = Date.now() + 10_000;
    while (!(await canConnect(this.port))) {
      if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
      if (Date.now() > deadline) throw new Error("nats-server did not start");
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Kills the server (SIGKILL: no graceful shutdown) and waits for the process to exit. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  }

  /** Kills the server and removes its store. */
  async destroy(): Promise<void> {
    await this.kill();
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}
