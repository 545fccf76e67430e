import type { MessageInitShape } from "@bufbuild/protobuf";
import { isUuid } from "@pgw/contracts";
import type { ListConfirmationsResponseSchema } from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";
import type { Finding } from "../domain/findings";
import { confirmationsOf } from "../store";
import type { ReceiptsDeps } from "./deps";

/** ListConfirmations: an operation's uploads with their review outcome and findings (none for an unknown id). */
export async function listConfirmations(deps: Pick<ReceiptsDeps, "sql">, operationId: string): Promise<MessageInitShape<typeof ListConfirmationsResponseSchema>> {
  const rows = isUuid(operationId) ? await confirmationsOf(deps.sql, operationId.toLowerCase()) : [];
  return {
    confirmations: rows.map((c) => ({
      id: c.id,
      filename: c.filename,
      contentType: c.contentType,
      outcome: c.outcome ?? undefined,
      manualCheckReason: c.manualCheckReason ?? undefined,
      findings: (JSON.parse(c.findings) as Finding[]).map((f) => ({ code: f.code, detail: f.detail ?? "" })),
      createdAt: c.createdAt.toISOString(),
      appliedAt: c.appliedAt?.toISOString(),
    })),
  };
}
