import type { DataKeys, DbClient, KitLog } from "@pgw/kit";

/** What the notifier's RPC handlers need. */
export interface NotifierDeps {
  db: DbClient;
  log: KitLog;
  /** Seal the signing secrets the store keeps. */
  keys: DataKeys;
  /** Asks the delivery workers to look for due deliveries now (after a redelivery). */
  wake(): void;
}
