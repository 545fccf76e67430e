import type { DbClient, KitLog } from "@pgw/kit";

/** What the notifier's RPC handlers need. */
export interface NotifierDeps {
  db: DbClient;
  log: KitLog;
  /** Asks the delivery workers to look for due deliveries now (after a redelivery). */
  wake(): void;
}
