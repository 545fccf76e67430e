import { TcpProxy } from "./tcp-proxy";

/**
 * One address for all replicas of a unit, as a Kubernetes ClusterIP Service gives it: each new TCP
 * connection goes to the next replica's port in turn. A replica taken out (its pod terminating)
 * gets no new connections; those it holds stay until it closes them. Counts the connections each
 * replica was handed, so a test can see that every replica served.
 */
export class ServiceAddress {
  private readonly proxy = new TcpProxy(() => this.nextReplica());
  private readonly ports: number[] = [];
  private turn = 0;
  /** Connections handed to each replica's port. */
  readonly connections = new Map<number, number>();

  static async start(): Promise<ServiceAddress> {
    const address = new ServiceAddress();
    await address.proxy.start();
    return address;
  }

  get url(): string {
    return `http://127.0.0.1:${this.proxy.port}`;
  }

  add(...ports: number[]): void {
    this.ports.push(...ports);
  }

  remove(port: number): void {
    const i = this.ports.indexOf(port);
    if (i >= 0) this.ports.splice(i, 1);
  }

  /** Stops listening and closes every connection through it. */
  close(): Promise<void> {
    return this.proxy.cut();
  }

  private nextReplica() {
    if (this.ports.length === 0) return undefined;
    const port = this.ports[this.turn++ % this.ports.length];
    this.connections.set(port, (this.connections.get(port) ?? 0) + 1);
    return { host: "127.0.0.1", port };
  }
}
