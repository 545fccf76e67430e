import { AppError, formatAmount, requireUuid, type Currency } from "@pgw/contracts";
import type { Operation } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import type { UploadConfirmationRequest } from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";
import { randomUUID } from "node:crypto";
import { MAX_CONFIRMATION_BYTES, normaliseDeclaredType, uploadedFileType, type UploadedFileType } from "../domain/file-type";
import { claimReview, markApplied, recordConfirmation, releaseReview } from "../store";
import { type ReceiptsDeps } from "./deps";
import { reviewReceipt } from "./review-receipt";

/**
 * The request's own checks, before anything is looked up: confirmation_type `receipt`, a UUID
 * operation_id, a non-empty file of at most 10 MiB that is, or was sent as, a PDF, JPEG or PNG.
 *
 * The bytes decide how the file is reviewed; the declared type is only recorded. Bytes that are no
 * accepted type but were sent as one (random bytes called receipt.pdf) are "not a PDF and could not
 * be validated" (docs/api.md, The operation object: manual_check_reason): a human looks at them under
 * `not_terminal`, never a fraud signal. A file neither declared nor recognised as an accepted type
 * is 415. Bytes that do start as a PDF are reviewed as one (review-receipt.ts): a PDF that cannot
 * be read (cut short, or refused by the parser) is `not_terminal` too; tampering signs (an
 * incremental update, offsets edited by hand) and contents that contradict the operation are
 * `potential_fake`.
 *
 * @throws AppError validation_error (400), payload_too_large (413), unsupported_media_type (415)
 */
export function checkUpload(req: UploadConfirmationRequest): UploadedFileType {
  if (req.confirmationType !== "receipt") throw new AppError("validation_error", "confirmation_type must be receipt", [{ field: "confirmation_type", issue: "must be receipt" }]);
  requireUuid(req.operationId, "operation_id");
  if (req.content.byteLength === 0) throw new AppError("validation_error", "the receipt file is empty", [{ field: "receipt", issue: "must not be empty" }]);
  if (req.content.byteLength > MAX_CONFIRMATION_BYTES) throw new AppError("payload_too_large", `the receipt file is larger than ${MAX_CONFIRMATION_BYTES} bytes`, [{ field: "receipt", issue: "must be at most 10 MiB" }]);
  const type = uploadedFileType(req.content, req.contentType);
  if (!type) throw new AppError("unsupported_media_type", "the receipt must be a PDF, JPEG or PNG file", [{ field: "receipt", issue: "must be a PDF, JPEG or PNG file" }]);
  return type;
}

/**
 * How long a review's claim on its operation holds if the process dies mid-review; far longer than
 * a review takes (the caller waits 30 s at most; a review past that applies nothing).
 */
const REVIEW_CLAIM_MS = 120_000;

/**
 * UploadConfirmation: validate → load the shop's operation (404 / 412) → store the file durably →
 * review → record the confirmation with its outcome and findings → apply the outcome at
 * operations → answer the operation. The provider is asked outside any transaction.
 *
 * The outcome is applied only while the caller still waits (`signal`, its deadline): a review that
 * ran past it (PDFs queued behind others) changes nothing, so the upload the caller was told
 * failed did fail, and its retry is reviewed anew.
 *
 * @throws AppError not_found when the operation is not the shop's; invalid_state unless it is
 *   awaiting_confirmation (also when another decision won meanwhile, or another upload for it is
 *   under review, by any replica: refused before its file is stored or parsed, so a payer repeating
 *   uploads cannot fill the parse queue every shop shares); unavailable when the
 *   review needs the provider and it cannot be asked, or ran past the caller's deadline (nothing
 *   changes; retry).
 */
export async function uploadConfirmation(deps: ReceiptsDeps, req: UploadConfirmationRequest, signal?: AbortSignal): Promise<Operation> {
  const type = checkUpload(req);
  const operationId = req.operationId.toLowerCase();
  const { operation } = await deps.peers.operations.getOperationState({ shopId: req.shopId, ref: { ref: { case: "operationId", value: operationId } } });
  if (!operation) throw new AppError("not_found", "operation not found");
  if (operation.status !== "awaiting_confirmation") throw new AppError("invalid_state", `operation is ${operation.status}; a receipt is accepted only while it is awaiting_confirmation`);
  const holder = randomUUID();
  if (!(await claimReview(deps.sql, operationId, holder, REVIEW_CLAIM_MS))) {
    throw new AppError("invalid_state", "another receipt for this operation is being reviewed; its outcome decides");
  }
  try {
    return await reviewAndApply(deps, req, { operationId, operation, type }, signal);
  } finally {
    await releaseReview(deps.sql, operationId, holder).catch((err: unknown) => deps.log.warn({ err, operation_id: operationId }, "could not end the review claim; it lapses by itself"));
  }
}

/** The review of an upload already checked against its operation, and its outcome applied. */
async function reviewAndApply(
  deps: ReceiptsDeps,
  req: UploadConfirmationRequest,
  { operationId, operation, type }: { operationId: string; operation: Operation; type: UploadedFileType },
  signal?: AbortSignal,
): Promise<Operation> {
  const declaredType = normaliseDeclaredType(req.contentType);
  const stored = await deps.files.put({ content: req.content, contentType: type });
  const { decision, findings } = await reviewReceipt(deps, operation, { content: req.content, type, declaredType });
  const id = randomUUID();
  await recordConfirmation(deps.sql, {
    id,
    operationId,
    shopId: req.shopId,
    confirmationType: req.confirmationType,
    fileId: stored.id,
    filename: req.filename.slice(0, 255),
    contentType: type,
    declaredType,
    decision,
    findings,
  });
  deps.log.info({ operation_id: operationId, confirmation_id: id, outcome: decision.outcome, findings: findings.map((f) => f.code) }, "receipt reviewed");
  if (decision.outcome === "retry") throw new AppError("unavailable", "the provider could not confirm the payment right now; retry the upload later");
  if (signal?.aborted) throw new AppError("unavailable", "the review took longer than the request could wait; nothing was applied; retry the upload");

  const applied = await deps.peers.operations.applyReviewOutcome({
    operationId,
    outcome: decision.outcome,
    actualAmount: decision.outcome === "completed" ? formatAmount(decision.actualAmount, operation.currency as Currency) : undefined,
    manualCheckReason: decision.outcome === "manual_check" ? decision.reason : undefined,
  });
  await markApplied(deps.sql, id);
  return applied.operation!;
}
