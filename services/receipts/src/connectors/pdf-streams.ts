/**
 * What a PDF's streams decode to, measured before any parser reads them: each stream's filters are
 * applied in order, every stage counting towards one limit per document and stopping as soon as it
 * is passed, so a stream that inflates to gigabytes costs at most the limit (a decompression bomb
 * is refused, never held). Data starting a zlib-family filter is read to the end of the file, not
 * only to its declared /Length: those formats end themselves, so a /Length that lies cannot hide
 * data from the count.
 *
 * Not measured here: encrypted documents' streams (ciphertext until decrypted) and image codecs
 * (JPEG, JPEG 2000, JBIG2, CCITT), which text extraction does not decode; the parsing process's
 * memory limit bounds those (pdf-reader.ts).
 */
import { setImmediate } from "node:timers/promises";
import { nameOf, readPdfObjects, resolve, type PdfDict, type PdfStream, type PdfValue } from "../domain/pdf-syntax";
import { DECODERS } from "./pdf-filters";

/** A document whose streams decode to more than the limit, or cannot be measured: not parsed. */
export class PdfDecodeLimitError extends Error {}

/** How long the measuring runs before letting other work on the event loop have a turn, ms. */
const TURN_MS = 10;
const ZLIB_FAMILY = new Set(["FlateDecode", "Fl", "BrotliDecode"]);
const latin1 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");

/** A stream's filters in order ([] when it has none); null when they cannot be read. */
function filtersOf(dict: PdfDict, objects: ReadonlyMap<number, PdfValue>): string[] | null {
  if (!dict.has("Filter")) return [];
  const filter = resolve(dict.get("Filter"), objects);
  if (filter === undefined) return null; // a reference to no object
  if (filter === null) return [];
  const names = (Array.isArray(filter) ? filter : [filter]).map((f) => nameOf(f, objects));
  return names.every((n) => n !== undefined) ? (names as string[]) : null;
}

/** The /EarlyChange of LZW filter number `index` (default 1). */
function earlyChange(dict: PdfDict, index: number, objects: ReadonlyMap<number, PdfValue>): number {
  const params = resolve(dict.get("DecodeParms"), objects);
  const mine = resolve(Array.isArray(params) ? params[index] : params, objects);
  const value = mine instanceof Map ? resolve(mine.get("EarlyChange"), objects) : undefined;
  return value === 0 ? 0 : 1;
}

/**
 * The total size of what every stream of `pdf` decodes to (each filter stage counted), at most
 * `limit`; and the decoded object streams (compressed objects) as latin1 text.
 *
 * @throws PdfDecodeLimitError past `limit`, or when the objects or a stream's filters cannot be read
 * @throws the reason of `signal` once it aborts (checked between turns)
 */
export async function decodeStreams(pdf: Uint8Array, limit: number, signal: AbortSignal): Promise<{ bytes: number; objectStreams: string[] }> {
  let turn = performance.now();
  /** Lets other work on the event loop run once this turn has taken TURN_MS; stops at the deadline. */
  const pace = async () => {
    if (performance.now() - turn < TURN_MS) return;
    await setImmediate();
    signal.throwIfAborted();
    turn = performance.now();
  };
  const reading = readPdfObjects(latin1(pdf));
  let step = reading.next();
  for (; !step.done; step = reading.next()) await pace();
  const parsed = step.value;
  if (!parsed) throw new PdfDecodeLimitError("its objects cannot be read within bounds");
  const objectStreams: string[] = [];
  let total = 0;
  for (const stream of parsed.streams) {
    await pace();
    const decoded = await decodeStream(pdf, stream, parsed.objects, limit - total, pace);
    if (!decoded) throw new PdfDecodeLimitError(`its streams decode to more than ${+(limit / 2 ** 20).toFixed(2)} MiB`);
    total += decoded.bytes;
    if (decoded.content && nameOf(stream.dict.get("Type"), parsed.objects) === "ObjStm") objectStreams.push(latin1(decoded.content));
  }
  return { bytes: total, objectStreams };
}

/**
 * What `stream` decodes to: the bytes every stage made, and the last stage's output when every
 * filter was decoded; null past `budget`.
 */
async function decodeStream(pdf: Uint8Array, stream: PdfStream, objects: ReadonlyMap<number, PdfValue>, budget: number, pace: () => Promise<void>): Promise<{ bytes: number; content?: Uint8Array } | null> {
  const filters = filtersOf(stream.dict, objects);
  if (!filters) throw new PdfDecodeLimitError(`the filters of object ${stream.objectNumber} cannot be read`);
  let data = pdf.subarray(stream.start, filters.length && ZLIB_FAMILY.has(filters[0]) ? pdf.length : stream.end);
  let bytes = 0;
  for (const [index, filter] of filters.entries()) {
    const decode = DECODERS[filter];
    if (!decode) return { bytes }; // an image codec, encryption or an unknown filter: not decoded here
    const out = await decode(data, budget - bytes, { earlyChange: earlyChange(stream.dict, index, objects), pace });
    if (!out) return null;
    bytes += out.length;
    data = out;
  }
  return { bytes, content: data };
}
