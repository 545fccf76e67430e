import type { MessageInitShape } from "@bufbuild/protobuf";
import { isUuid } from "@pgw/contracts";
import type { ListConfirmationsResponseSchema } from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";
import { listConfirmations as uploadsOf } from "../store";
import type { ReceiptsDeps } from "./deps";

/** ListConfirmations: an operation's uploads with their review outcome and findings (none for an unknown id). */
export async function listConfirmations(deps: Pick<ReceiptsDeps, "sql">, operationId: string): Promise<MessageInitShape<typeof ListConfirmationsResponseSchema>> {
  const rows = isUuid(operationId) ? await uploadsOf(deps.sql, operationId.toLowerCase()) : [];
  return {
    confirmations: rows.map((c) => ({
      id: c.id,
      filename: c.filename,
      contentType: c.contentType,
      outcome: c.outcome ?? undefined,
      manualCheckReason: c.manualCheckReason ?? undefined,
      findings: c.findings.map((f) => ({ code: f.code, detail: f.detail ?? "" })),
      createdAt: c.createdAt.toISOString(),
      appliedAt: c.appliedAt?.toISOString(),
    })),
  };
}
