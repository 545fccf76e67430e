/**
 * Hears a Postgres NOTIFY channel: a transaction sends `pg_notify(channel)`, which Postgres
 * delivers on commit to every listening replica, so a background loop (the outbox relay, the
 * notifier's delivery queue) starts at once instead of at its next poll. Reconnects after a lost
 * connection and calls `onNotify` once listening again; the loop's own poll covers any gap.
 */
import pg from "pg";
import type { KitLog } from "../events/nats";

export interface PgListener {
  stop(): Promise<void>;
}

export interface ListenOptions {
  /** Wait before reconnecting (default 1000 ms). */
  reconnectMs?: number;
  /** Called when the listening connection is lost (notifications may be missed until `onNotify` is called again). */
  onLost?: () => void;
}

export function listenForNotify(databaseUrl: string, channel: string, log: KitLog, onNotify: () => void, opts: ListenOptions = {}): PgListener {
  const reconnectMs = opts.reconnectMs ?? 1000;
  let stopped = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;

  const connect = async () => {
    if (stopped) return;
    const c = new pg.Client({ connectionString: databaseUrl });
    client = c;
    const retry = () => {
      if (stopped || client !== c) return;
      client = undefined;
      opts.onLost?.();
      c.end().catch(() => undefined);
      timer = setTimeout(() => void connect(), reconnectMs);
    };
    c.on("error", (err) => {
      log.warn({ err, channel }, "pg listener: connection lost; reconnecting");
      retry();
    });
    c.on("end", retry);
    c.on("notification", () => onNotify());
    try {
      await c.connect();
      await c.query(`LISTEN ${channel}`);
      onNotify(); // whatever was notified while not listening
    } catch (err) {
      log.warn({ err, channel }, "pg listener: cannot listen; retrying");
      retry();
    }
  };
  void connect();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}
