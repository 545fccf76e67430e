import net from "node:net";

/** Where a proxy sends a new connection; undefined turns it away (nothing to send it to). */
export type PickTarget = () => { host: string; port: number } | undefined;

/**
 * A TCP proxy a test can cut and restore, to make a real dependency (Postgres, NATS) unreachable
 * for a unit without touching the server itself.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  /** Connections turned away while {@link hangUp} holds: each one a client's attempt to reach the dependency. */
  turnedAway = 0;

  constructor(private readonly pickTarget: PickTarget) {}

  static forUrl(url: string): TcpProxy {
    const u = new URL(url);
    const target = { host: u.hostname, port: Number(u.port) };
    return new TcpProxy(() => target);
  }

  /** Same URL, through the proxy. */
  rewrite(url: string): string {
    const u = new URL(url);
    u.hostname = "127.0.0.1";
    u.port = String(this.port);
    return u.toString();
  }

  async start(): Promise<void> {
    if (this.server?.listening) await this.cut(); // hanging up (hangUp): forward again instead
    this.server = net.createServer((client) => {
      const target = this.pickTarget();
      if (!target) return void client.destroy();
      const upstream = net.connect(target.port, target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, "127.0.0.1", resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  /**
   * Closes every open connection and from now on hangs up each new one at once, counting it: the
   * dependency is down, and the test sees every attempt a client makes to reach it. Needs a port
   * (start first); `start` forwards again.
   */
  async hangUp(): Promise<void> {
    await this.cut();
    this.server = net.createServer((client) => {
      this.turnedAway++;
      client.destroy();
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, "127.0.0.1", resolve));
  }

  /** Closes the listening port and every open connection: the dependency is gone. */
  async cut(): Promise<void> {
    const closed = new Promise((r) => this.server?.close(r));
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}
