import type { DbClient, Logger } from "@pgw/kit";
import type { PdfReader } from "../connectors/pdf-reader";
import type { Peers } from "../peers";
import type { FileStorage } from "../storage/file-storage";
import type { Db } from "../store";

/** Collaborators of the receipts handlers (passed in, never module singletons). */
export interface ReceiptsDeps {
  /** ORM client: confirmation uploads and stored files. */
  db: Db;
  /** pg pool: evidence, read on every get_operation_state of a completed operation and written by the consumer. */
  sql: DbClient;
  log: Logger;
  files: FileStorage;
  pdf: PdfReader;
  peers: Peers;
  /** Receipt links: the gateway's public origin and the HMAC key. */
  links: { baseUrl: string; secret: string };
  now: () => Date;
}
