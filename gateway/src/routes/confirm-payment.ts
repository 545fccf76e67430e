import type Router from "@koa/router";
import { AppError, operationStateJson, type ErrorDetail, isUuid } from "@pgw/contracts";
import { type Logger } from "@pgw/kit/runtime";
import { koaBody } from "koa-body";
import type Koa from "koa";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { Principal } from "../auth/key-cache";
import type { GatewayClients } from "../clients";
import type { ReceiptEvidence } from "../receipt-evidence";

/** Largest receipt file (docs/architecture.md, confirm_payment); one byte more is 413. */
export const MAX_RECEIPT_BYTES = 10 * 1024 * 1024;
/** Deadline of an upload's review at receipts (PDF parsing, the provider's funds check, the outcome). */
export const CONFIRM_TIMEOUT_MS = 30_000;

// formidable error codes: fields too large, total and single file too large.
const TOO_LARGE = new Set([1006, 1009, 1016]);
/** formidable's maxFilesExceeded: more than one `receipt` file part. */
const TOO_MANY_FILES = 1015;

/** Where a gateway spools uploads: a directory of each request's own under `root` (TMPDIR). */
export interface UploadSpool {
  root: string;
  log: Logger;
}

/** koa-body's multipart parser writing into `uploadDir`. */
const parseMultipart = (uploadDir: string): Koa.Middleware =>
  koaBody({
    multipart: true,
    json: false,
    urlencoded: false,
    text: false,
    formidable: {
      uploadDir,
      maxFiles: 1,
      maxFileSize: MAX_RECEIPT_BYTES,
      maxTotalFileSize: MAX_RECEIPT_BYTES,
      maxFields: 10,
      maxFieldsSize: 64 * 1024,
      allowEmptyFiles: true,
      minFileSize: 0,
      filter: (part) => part.name === "receipt",
      // RFC 7578 makes a part's Content-Type optional; formidable takes a part without one for a
      // text field even when it names a file, and drops it. A part with a filename is the file: its
      // bytes decide its type anyway.
      onPart: (part, handle) => {
        if (typeof part.originalFilename === "string" && !part.mimetype) part.mimetype = "application/octet-stream";
        handle(part);
      },
    },
    onError: (err) => {
      const code = (err as { code?: number }).code;
      if (code !== undefined && TOO_LARGE.has(code)) throw new AppError("payload_too_large", `the receipt file must be at most ${MAX_RECEIPT_BYTES} bytes (10 MiB)`, [{ field: "receipt", issue: "must be at most 10 MiB" }]);
      if (code === TOO_MANY_FILES) throw new AppError("validation_error", "exactly one receipt file is accepted", [{ field: "receipt", issue: "must be a single file" }]);
      throw new AppError("validation_error", "malformed multipart body", [{ field: "body", issue: "must be multipart/form-data" }], { cause: err });
    },
  });

/**
 * Multipart parser for receipt uploads: at most one file, in the `receipt` part, of at most 10 MiB;
 * empty files reach the route, which answers 400 itself (so does a body that is not multipart).
 * Parser failures become the public error body, never a 500.
 *
 * Files are spooled into a directory of the request's own, removed once the rest of the request
 * (`next`) has ended, whatever happened: formidable alone leaves a second `receipt` part behind (it
 * opens that file after refusing it), and a refused, aborted or failed upload must not stay on
 * disk either. The route reads the file inside `next`.
 */
export const multipartBody =
  ({ root, log }: UploadSpool): Koa.Middleware =>
  async (ctx, next) => {
    const uploadDir = await fs.mkdtemp(path.join(root, "pgw-upload-"));
    try {
      await parseMultipart(uploadDir)(ctx, next);
    } finally {
      // A file formidable opens after this cannot be created: its directory is gone.
      await fs.rm(uploadDir, { recursive: true, force: true, maxRetries: 3 }).catch((err: unknown) => log.error({ err, dir: uploadDir }, "could not remove an upload's temp files"));
    }
  };

/** A receipt upload read from a parsed multipart request. */
export interface ReceiptUpload {
  fields: Record<string, string | undefined>;
  filename: string;
  contentType: string;
  content: Buffer;
}

interface UploadedFile {
  filepath: string;
  originalFilename?: string | null;
  mimetype?: string | null;
}

/**
 * The `receipt` file and the text fields `names` of a request parsed by multipartBody (inside it:
 * its temp files are gone once it ends); a 400 naming every missing part.
 */
export async function readReceiptUpload(ctx: Koa.Context, names: readonly string[]): Promise<ReceiptUpload> {
  const body = (ctx.request.body ?? {}) as Record<string, unknown>;
  const files = (ctx.request.files ?? {}) as Record<string, UploadedFile | UploadedFile[] | undefined>;
  const file = [files.receipt].flat()[0];
  const details: ErrorDetail[] = [];
  const fields: Record<string, string | undefined> = {};
  for (const name of names) {
    const value = body[name];
    if (typeof value === "string" && value !== "") fields[name] = value;
    else details.push({ field: name, issue: Array.isArray(value) ? "must be given once" : "is required" });
  }
  if (!file) details.push({ field: "receipt", issue: "a file part is required" });
  if (details.length) throw new AppError("validation_error", `missing or invalid parts: ${details.map((d) => d.field).join(", ")}`, details);
  return { fields, filename: file!.originalFilename ?? "", contentType: file!.mimetype ?? "", content: await fs.readFile(file!.filepath) };
}

/**
 * POST /v1/confirm_payment: multipart `operation_id`, `confirmation_type` (`receipt`) and the
 * `receipt` file. The receipts service checks and reviews it; the answer is the operation as
 * get_operation_state shows it (evidence `unavailable` rather than a failure when it cannot be
 * read right after the upload: the upload itself succeeded).
 */
export function confirmPaymentRoute(router: Router, clients: GatewayClients, receiptEvidence: ReceiptEvidence, spool: UploadSpool): void {
  router.post("/v1/confirm_payment", multipartBody(spool), async (ctx) => {
    const { shopId } = ctx.state.auth as Principal;
    const upload = await readReceiptUpload(ctx, ["operation_id", "confirmation_type"]);
    const operationId = upload.fields.operation_id!;
    if (!isUuid(operationId)) throw new AppError("validation_error", "operation_id must be a UUID", [{ field: "operation_id", issue: "must be a UUID" }]);
    const { operation } = await clients.receipts.uploadConfirmation(
      { shopId, operationId, confirmationType: upload.fields.confirmation_type!, filename: upload.filename, contentType: upload.contentType, content: upload.content },
      { timeoutMs: CONFIRM_TIMEOUT_MS },
    );
    ctx.body = operationStateJson(operation!, await receiptEvidence.of(operation!));
  });
}
