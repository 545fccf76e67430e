/**
 * Hears "a delivery became due" (Postgres LISTEN on the notifier database): the consumer's
 * transaction sends NOTIFY, which Postgres delivers on commit to every replica, so a worker starts
 * the attempt at once instead of at its next poll. Reconnects after a lost connection; the
 * workers' poll covers any gap.
 */
import type { KitLog } from "@pgw/kit";
import pg from "pg";
import { DUE_CHANNEL } from "./store";

export interface DueListener {
  stop(): Promise<void>;
}

export function listenForDue(databaseUrl: string, log: KitLog, onDue: () => void, reconnectMs = 1000): DueListener {
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
      c.end().catch(() => undefined);
      timer = setTimeout(() => void connect(), reconnectMs);
    };
    c.on("error", (err) => {
      log.warn({ err }, "due listener: connection lost; reconnecting");
      retry();
    });
    c.on("end", retry);
    c.on("notification", () => onDue());
    try {
      await c.connect();
      await c.query(`LISTEN ${DUE_CHANNEL}`);
      onDue(); // whatever became due while not listening
    } catch (err) {
      log.warn({ err }, "due listener: cannot listen; retrying");
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
