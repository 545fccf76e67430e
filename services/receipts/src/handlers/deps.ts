import type { Logger, SingleFlight } from "@pgw/kit/runtime";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { GetEvidenceResponseSchema } from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";
import type { PdfReader } from "../connectors/pdf-reader";
import type { Peers } from "../connectors/peers";
import type { FileStorage, Sql } from "../store";

/** Collaborators of the receipts handlers (passed in, never module singletons). */
export interface ReceiptsDeps {
  /** The receipts database (Kysely): confirmations, review leases, evidence; statements in store/. */
  sql: Sql;
  log: Logger;
  files: FileStorage;
  pdf: PdfReader;
  peers: Peers;
  /** Receipt links: the gateway's public origin and the HMAC key. */
  links: { baseUrl: string; secret: string };
  /**
   * Materialisations under way by operation id: the status consumer and GetEvidence (the notifier
   * asks as the same event reaches it) share one, so the provider is asked once per operation.
   */
  materialising: SingleFlight<MessageInitShape<typeof GetEvidenceResponseSchema>>;
  now: () => Date;
}
