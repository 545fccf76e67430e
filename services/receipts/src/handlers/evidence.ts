import { AppError, capturedOf, legFactsOf, materialiseEvidence, parseCurrencyAmount, presentEvidence, requireUuid, verifyReceiptLink, type LegFacts, type Materialised } from "@pgw/contracts";
import { fromConnectError } from "@pgw/kit/rpc";
import type { Operation } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { GetEvidenceResponseSchema, GetReceiptFileResponse } from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";
import { detectFileType } from "../domain/file-type";
import { findEvidenceItem, readEvidence, saveEvidence, setItemFile, type EvidenceItemRow } from "../store";
import { type ReceiptsDeps } from "./deps";

type EvidenceAnswer = MessageInitShape<typeof GetEvidenceResponseSchema>;

const NOT_READY: EvidenceAnswer = { status: "not_ready", items: [] };
const UNAVAILABLE: EvidenceAnswer = { status: "unavailable", items: [] };

/** Storage → wire: items with fresh 15-minute links for those with a file. */
function present(deps: ReceiptsDeps, status: string, items: EvidenceItemRow[]): EvidenceAnswer {
  return presentEvidence(status, items, deps.links, deps.now());
}

/**
 * Materialises the evidence of a completed operation and stores it once: from the provider's legs
 * the status event carried (`known`, made by @pgw/contracts evidenceOfCompletion), else from those
 * routing reports now (@pgw/contracts materialiseEvidence). Answers `unavailable` and stores nothing
 * when routing cannot report the legs now; a later read tries again. A provider that does not know
 * the operation has no legs. Concurrent materialisations of one operation in this process share one
 * (deps.materialising).
 */
export function materialise(deps: ReceiptsDeps, op: Completed, known?: Materialised | null): Promise<EvidenceAnswer> {
  return deps.materialising.run(op.operationId, async () => {
    const done = known ?? (await fromRouting(deps, op));
    return done ? store(deps, op.operationId, done) : UNAVAILABLE;
  });
}

type Completed = Pick<Operation, "operationId" | "actualAmount" | "updatedAt">;

/** The evidence the provider's legs make as routing reports them now; null when it cannot. */
async function fromRouting(deps: ReceiptsDeps, op: Completed): Promise<Materialised | null> {
  let legs: LegFacts[];
  try {
    legs = legFactsOf((await deps.peers.routing.getEvidence({ operationId: op.operationId })).legs);
  } catch (err) {
    const app = fromConnectError(err);
    if (app.code !== "not_found") {
      deps.log.warn({ operation_id: op.operationId, err: app }, "provider evidence unavailable; not materialised");
      return null;
    }
    legs = [];
  }
  return materialiseEvidence(op.operationId, legs, capturedOf(op, deps.now()));
}

/**
 * Stores materialised evidence once and answers it as stored. Legs whose items do not add up are
 * reported by the materialisation that stores them, so a repeat does not report them again.
 */
async function store(deps: ReceiptsDeps, operationId: string, done: Materialised): Promise<EvidenceAnswer> {
  const saved = await saveEvidence(deps.sql, operationId, done.status, done.items);
  for (const m of saved ? done.mismatches : []) {
    deps.log.error({ alert: "receipts_evidence_mismatch", operation_id: operationId, ...m }, "provider evidence does not add up (items to their leg, or legs to the operation); shown as one synthetic item");
  }
  const stored = saved ?? (await readEvidence(deps.sql, operationId));
  return stored ? present(deps, stored.status, stored.items) : UNAVAILABLE;
}

/**
 * GetEvidence: stored evidence when materialised; otherwise, once the operation is completed, it
 * is materialised on demand (the status event may not have arrived, or materialisation failed
 * earlier) from the completed operation the caller passed, or else from operations' record. Not
 * completed: `not_ready`, no items. The caller's snapshot is used only when it is this operation,
 * completed, with a captured amount and a timestamp that parse; any other is ignored, as the proto
 * says, and operations is asked (evidence is stored once, so it must not come from garbage).
 */
export async function getEvidence(deps: ReceiptsDeps, operationIdRaw: string, known?: Operation): Promise<EvidenceAnswer> {
  const operationId = requireUuid(operationIdRaw, "operation_id");
  const stored = await readEvidence(deps.sql, operationId);
  if (stored) return present(deps, stored.status, stored.items);
  const operation = known && usableSnapshot(known, operationId) ? known : (await deps.peers.operations.getCheckout({ operationId })).operation;
  if (!operation || operation.status !== "completed") return NOT_READY;
  return materialise(deps, operation);
}

/** Whether a caller's snapshot is this operation, completed, with figures evidence can be made from. */
function usableSnapshot(op: Operation, operationId: string): boolean {
  return op.operationId.toLowerCase() === operationId && op.status === "completed" && parseCurrencyAmount(op.actualAmount, op.currency) !== null && !Number.isNaN(Date.parse(op.updatedAt));
}

/**
 * GetReceiptFile: verifies the link (constant-time signature, 15-minute lifetime), then serves the
 * provider's file, fetched through routing once and cached in FileStorage.
 *
 * @throws AppError not_found for an altered, expired or unknown link (the caller learns nothing
 *   about which items exist), unavailable while the provider cannot serve the file.
 */
export async function getReceiptFile(deps: ReceiptsDeps, req: { itemId: string; expires: bigint; signature: string }): Promise<Omit<GetReceiptFileResponse, "$typeName">> {
  const refusal = verifyReceiptLink(deps.links.secret, req.itemId, Number(req.expires), req.signature, deps.now());
  if (refusal === "expired") throw new AppError("not_found", "receipt link has expired; read the operation again for a fresh link");
  if (refusal) throw new AppError("not_found", "receipt link is not valid");
  const item = await findEvidenceItem(deps.sql, requireUuid(req.itemId, "item_id"));
  if (!item || !item.hasFile || !item.providerItemId) throw new AppError("not_found", "receipt file not found");
  if (item.fileId) {
    const cached = await deps.files.get(item.fileId);
    if (cached) return { content: cached.content, contentType: cached.contentType };
  }
  const file = await deps.peers.routing.getEvidenceFile({ operationId: item.operationId, itemId: item.providerItemId });
  const contentType = detectFileType(file.content) ?? (file.contentType || "application/octet-stream");
  const stored = await deps.files.put({ content: file.content, contentType });
  await setItemFile(deps.sql, item.id, stored.id);
  return { content: file.content, contentType };
}
