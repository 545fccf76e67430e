import type { Logger } from "@pgw/kit";
import type { PdfReader } from "../connectors/pdf-reader";
import type { Peers } from "../peers";
import type { FileStorage } from "../storage/file-storage";
import type { Db } from "../store";

/** Collaborators of the receipts handlers (passed in, never module singletons). */
export interface ReceiptsDeps {
  db: Db;
  log: Logger;
  files: FileStorage;
  pdf: PdfReader;
  peers: Peers;
  /** Receipt links: the gateway's public origin and the HMAC key. */
  links: { baseUrl: string; secret: string };
  now: () => Date;
}
