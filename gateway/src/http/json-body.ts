import { parse as parseJson } from "@hapi/bourne";
import { AppError, refuseUnstorableText } from "@pgw/contracts";
import type Koa from "koa";
import { pipeline, type Readable } from "node:stream";
import zlib from "node:zlib";
import getRawBody from "raw-body";
import { isJsonObject } from "./json-fields";

/** Largest JSON body accepted, after decompression; larger is 413 (docs/architecture.md, Validation). */
export const JSON_BODY_LIMIT_BYTES = 64 * 1024;

const PARSED_METHODS = new Set(["POST", "PUT", "PATCH"]);
const DECOMPRESSORS: Record<string, () => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress> = {
  gzip: zlib.createGunzip,
  "x-gzip": zlib.createGunzip,
  deflate: zlib.createInflate,
  br: zlib.createBrotliDecompress,
};
// fatal: bytes that are not UTF-8 are refused, not replaced with U+FFFD (two different keys sent in
// another encoding would otherwise read as one and the same merchant_operation_id).
const utf8 = new TextDecoder("utf-8", { fatal: true });

const invalidBody = (message: string, field: string, issue: string) => new AppError("validation_error", message, [{ field, issue }]);

/** The request body as sent, decompressed per Content-Encoding. */
function decodedStream(ctx: Koa.Context): { stream: Readable; identity: boolean } {
  const encoding = (ctx.get("content-encoding") || "identity").trim().toLowerCase();
  if (encoding === "identity") return { stream: ctx.req, identity: true };
  const decompressor = DECOMPRESSORS[encoding];
  if (!decompressor) {
    throw new AppError("unsupported_media_type", `content-encoding ${encoding} is not supported`, [{ field: "content-encoding", issue: "must be gzip, deflate, br or identity" }]);
  }
  return { stream: pipeline(ctx.req, decompressor(), () => undefined), identity: false };
}

/** Reads and parses the JSON body; undefined when it is empty. */
async function readJson(ctx: Koa.Context): Promise<unknown> {
  const { stream, identity } = decodedStream(ctx);
  let bytes: Buffer;
  try {
    bytes = await getRawBody(stream, { limit: JSON_BODY_LIMIT_BYTES, length: identity ? ctx.get("content-length") || undefined : undefined });
  } catch (err) {
    if (typeof (err as { status?: unknown }).status === "number") throw err; // raw-body's 413 (too large) and 400 (aborted): the kit maps them
    throw invalidBody("request body does not decode with its content-encoding", "content-encoding", "does not match the body");
  }
  if (bytes.length === 0) return undefined;
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalidBody("request body is not valid UTF-8", "body", "must be UTF-8 encoded JSON");
  }
  try {
    // __proto__ keys are dropped like any unknown field (docs/architecture.md, Validation), so no
    // later copy of the body can set a prototype.
    return parseJson(text, { protoAction: "remove" });
  } catch {
    throw invalidBody("request body is not valid JSON", "body", "must be a JSON object");
  }
}

/**
 * The JSON body parser of a route (mounted after authentication, so nothing is parsed for an
 * unauthenticated call):
 * - a body of another media type is a 415 (docs/architecture.md, Validation); a body sent without
 *   a Content-Type is read as JSON, since JSON is the only format these routes take;
 * - gzip, deflate and br bodies are decompressed (the limit applies to what they decompress to); a
 *   body that does not decode with its Content-Encoding, or is not UTF-8, is a 400;
 * - a key or string holding U+0000 or a lone UTF-16 surrogate is a 400 naming its field (kit
 *   `refuseUnstorableText`): anywhere in the body, or with `fields` only in those top-level fields,
 *   since a public route ignores every other field (docs/architecture.md, Validation) and so must
 *   not refuse one;
 * - an empty body is no body (undefined, which routes with an optional body read as `{}`).
 */
export function jsonBody(fields?: readonly string[]): Koa.Middleware {
  return async (ctx, next) => {
    if (PARSED_METHODS.has(ctx.method) && carriesBody(ctx)) {
      if (ctx.get("content-type") && !ctx.is("json")) {
        throw new AppError("unsupported_media_type", "the request body must be application/json", [{ field: "content-type", issue: "must be application/json" }]);
      }
      ctx.request.body = (await readJson(ctx)) as typeof ctx.request.body;
      refuseUnstorableText(fields ? pick(ctx.request.body, fields) : ctx.request.body);
    }
    await next();
  };
}

/** The `fields` of a JSON object body; any other body as it is (the route refuses it). */
function pick(body: unknown, fields: readonly string[]): unknown {
  if (!isJsonObject(body)) return body;
  return Object.fromEntries(fields.filter((field) => Object.hasOwn(body, field)).map((field) => [field, body[field]]));
}

/** Whether the request has a body (chunked, or a non-zero Content-Length). */
function carriesBody(ctx: Koa.Context): boolean {
  return ctx.get("transfer-encoding") !== "" || Number(ctx.get("content-length") || 0) > 0;
}
