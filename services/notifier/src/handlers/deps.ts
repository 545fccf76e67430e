import type { DataKeys } from "@pgw/kit/db";
import type { KitLog } from "@pgw/kit/events";
import type { NotifierDb } from "../store";

/** What the notifier's RPC handlers need. */
export interface NotifierDeps {
  db: NotifierDb;
  log: KitLog;
  /** Seal the signing secrets the store keeps. */
  keys: DataKeys;
  /** Asks the delivery workers to look for due deliveries now (after a redelivery). */
  wake(): void;
}
