import { Money, parseCurrencyAmount } from "@pgw/contracts";
import { fromConnectError } from "@pgw/kit/rpc";
import type { Operation } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { PdfParseError } from "../connectors/pdf-reader";
import { PdfDecodeLimitError } from "../connectors/pdf-streams";
import type { UploadedFileType } from "../domain/file-type";
import type { Finding } from "../domain/findings";
import { inspectParsedPdf, mergeFindings, scanPdfBytes, type ParsedPdf } from "../domain/pdf-structure";
import { decideReview, fundsFinding, inspectReceiptText, type Funds, type ReviewDecision } from "../domain/review";
import type { ReceiptsDeps } from "./deps";

/** The review of one upload: what was found and what it decides. */
export interface Review {
  decision: ReviewDecision;
  findings: Finding[];
}

/**
 * The provider's answer through routing.CheckFunds; a failure to ask is `unknown`, never fatal. An
 * amount that is not one of the operation's currency (more places than it holds) is no amount.
 */
async function checkFunds(deps: ReceiptsDeps, op: Pick<Operation, "operationId" | "currency">): Promise<Funds> {
  const { operationId } = op;
  try {
    const res = await deps.peers.routing.checkFunds({ operationId });
    if (res.state === "arrived") return { state: "arrived", amount: parseCurrencyAmount(res.amount, op.currency) ?? undefined };
    if (res.state === "in_progress" || res.state === "not_found") return { state: res.state };
    deps.log.warn({ operation_id: operationId, state: res.state }, "unknown funds state from routing");
    return { state: "unknown" };
  } catch (err) {
    const app = fromConnectError(err);
    if (app.code === "not_found") return { state: "not_found" };
    deps.log.warn({ operation_id: operationId, err: app }, "funds check failed");
    return { state: "unknown" };
  }
}

/** The parsed document, or why it was not as a finding. */
async function parsePdf(deps: ReceiptsDeps, content: Uint8Array, shopId: string): Promise<ParsedPdf | Finding> {
  try {
    return await deps.pdf.read(content, shopId);
  } catch (err) {
    if (err instanceof PdfDecodeLimitError) return { code: "decompression_limit", detail: `not parsed: ${err.message}` };
    if (err instanceof PdfParseError) return { code: "unreadable", detail: `the PDF parser refused the document (${err.message})` };
    throw err;
  }
}

/**
 * Reviews an upload against `op` (docs/architecture.md, Receipt review): a PDF is parsed for real
 * (bytes and PDF.js), its text compared with the expected amount and the requisites, and the
 * provider asked whether the funds arrived; decideReview turns that into the outcome.
 */
export async function reviewReceipt(deps: ReceiptsDeps, op: Operation, file: { content: Uint8Array; type: UploadedFileType; declaredType: string }): Promise<Review> {
  const declared: Finding[] = file.declaredType && file.declaredType !== file.type ? [{ code: "declared_type_mismatch", detail: `declared ${file.declaredType}, content is ${file.type}` }] : [];
  if (file.type !== "application/pdf") {
    const funds = await checkFunds(deps, op);
    const findings = mergeFindings(declared, [{ code: "not_a_pdf", detail: `${file.type} cannot be validated` }], [fundsFinding(funds)]);
    return { decision: decideReview("image", findings, funds), findings };
  }
  const [parsed, funds] = await Promise.all([parsePdf(deps, file.content, op.shopId), checkFunds(deps, op)]);
  const expectation = { amount: new Money(op.expectedAmount), destination: op.number };
  const fromParse = "code" in parsed ? [parsed] : [...inspectParsedPdf(parsed), ...inspectReceiptText(parsed.text, expectation, funds)];
  const findings = mergeFindings(declared, scanPdfBytes(file.content, "code" in parsed ? [] : parsed.objectStreams), fromParse, [fundsFinding(funds)]);
  return { decision: decideReview("pdf", findings, funds), findings };
}
