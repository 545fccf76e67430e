/**
 * PDF syntax (ISO 32000-1 §7.2, §7.3, §7.5), pure, over a file's bytes read as latin1 text (one
 * character per byte, so indexes are byte offsets): names with their `#xx` escapes decoded, and the
 * file's objects with where each stream's data lies. Tolerant as readers are: what does not parse
 * is skipped, never thrown; and linear in the file's size, whatever its bytes.
 */

/** A name object (`/Type`), decoded. */
export interface PdfName {
  name: string;
}
/** An indirect reference (`12 0 R`) by object number. */
export interface PdfRef {
  ref: number;
}
/** What the checks read of a value; strings, booleans and null are kept as null. */
export type PdfValue = number | PdfName | PdfRef | PdfValue[] | PdfDict | null;
export type PdfDict = Map<string, PdfValue>;

/** A stream object: its dictionary, where its data starts, and where it ends by its /Length or `endstream`. */
export interface PdfStream {
  objectNumber: number;
  dict: PdfDict;
  start: number;
  end: number;
}

/** Character classes by code (§7.2.2): white space, delimiters, regular characters. */
const [SPACE, DELIMITER, REGULAR] = [1, 2, 0];
const CLASS = Uint8Array.from({ length: 256 }, (_, c) => ("\0\t\n\f\r ".includes(String.fromCharCode(c)) ? SPACE : "()<>[]{}/%".includes(String.fromCharCode(c)) ? DELIMITER : REGULAR));
/** The class of the character at `i` of `text` (past its end: a delimiter, which ends tokens). */
const classAt = (text: string, i: number) => (i < text.length ? CLASS[text.charCodeAt(i) & 0xff] : DELIMITER);
const isDigit = (text: string, i: number) => i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57;
const isSpace = (text: string, i: number) => classAt(text, i) === SPACE;
/** Where the run of characters `matches` starting at `from` ends. */
function runEnd(text: string, from: number, matches: (text: string, i: number) => boolean): number {
  let i = from;
  while (i < text.length && matches(text, i)) i++;
  return i;
}
/** Where the run of characters `matches` ending just before `end` starts. */
function runStart(text: string, end: number, matches: (text: string, i: number) => boolean): number {
  let i = end;
  while (i > 0 && matches(text, i - 1)) i--;
  return i;
}
/** Deeper nesting than this is no document a generator writes: the value does not parse. */
const MAX_DEPTH = 64;

/** A name's characters after the solidus, with `#xx` escapes decoded (`Java#53cript` → `JavaScript`). */
export function decodeName(raw: string): string {
  return raw.includes("#") ? raw.replace(/#([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))) : raw;
}

/** Every name in `text`, decoded. */
export function namesIn(text: string): Set<string> {
  const names = new Set<string>();
  for (let at = text.indexOf("/"); at >= 0; at = text.indexOf("/", at + 1)) {
    let end = at + 1;
    while (classAt(text, end) === REGULAR) end++;
    names.add(decodeName(text.slice(at + 1, end)));
  }
  return names;
}

const isName = (v: PdfValue | undefined): v is PdfName => typeof v === "object" && v !== null && "name" in v;
const isRef = (v: PdfValue | undefined): v is PdfRef => typeof v === "object" && v !== null && "ref" in v;

/** `value`, or the object it refers to. */
export const resolve = (value: PdfValue | undefined, objects: ReadonlyMap<number, PdfValue>): PdfValue | undefined => (isRef(value) ? objects.get(value.ref) : value);

/** The name `value` is (through a reference), or undefined. */
export function nameOf(value: PdfValue | undefined, objects: ReadonlyMap<number, PdfValue>): string | undefined {
  const resolved = resolve(value, objects);
  return isName(resolved) ? resolved.name : undefined;
}

/** Reads values from `text` at `pos` onwards; `pos` ends where reading stopped, also when it failed. */
class ValueReader {
  constructor(
    private readonly text: string,
    public pos: number,
  ) {}

  skipSpace(): void {
    const { text } = this;
    for (;;) {
      while (this.pos < text.length && classAt(text, this.pos) === SPACE) this.pos++;
      if (text[this.pos] !== "%") return;
      while (this.pos < text.length && text[this.pos] !== "\n" && text[this.pos] !== "\r") this.pos++;
    }
  }

  /** The regular characters from `pos` on (a name's or keyword's). */
  regular(): string {
    const from = this.pos;
    while (classAt(this.text, this.pos) === REGULAR) this.pos++;
    return this.text.slice(from, this.pos);
  }

  /** The next value, or undefined when there is none here (a keyword such as `stream`, or malformed input). */
  value(depth = 0): PdfValue | undefined {
    if (depth > MAX_DEPTH) return undefined;
    this.skipSpace();
    const { text, pos } = this;
    const c = text[pos];
    if (c === "/") {
      this.pos++;
      return { name: decodeName(this.regular()) };
    }
    if (c === "<" && text[pos + 1] === "<") return this.dict(depth);
    if (c === "<") return this.skipPast(">");
    if (c === "[") return this.array(depth);
    if (c === "(") return this.literalString();
    if (c === "+" || c === "-" || c === "." || isDigit(text, pos)) return this.numberOrRef();
    if (classAt(text, pos) === REGULAR) return ["true", "false", "null"].includes(this.regular()) ? null : undefined;
    return undefined;
  }

  private skipPast(close: string): null | undefined {
    const end = this.text.indexOf(close, this.pos);
    this.pos = end < 0 ? this.text.length : end + 1;
    return end < 0 ? undefined : null;
  }

  private literalString(): null | undefined {
    const { text } = this;
    let depth = 0;
    for (let i = this.pos; i < text.length; i++) {
      if (text[i] === "\\") i++;
      else if (text[i] === "(") depth++;
      else if (text[i] === ")" && --depth === 0) {
        this.pos = i + 1;
        return null;
      }
    }
    this.pos = text.length;
    return undefined;
  }

  /** A number, or `N G R` when an integer starts one. */
  private numberOrRef(): number | PdfRef | undefined {
    const { text } = this;
    const from = this.pos;
    const token = this.regular();
    const number = Number(token);
    if (token === "" || !Number.isFinite(number)) return undefined;
    if (!/^\d+$/.test(token)) return number;
    // An integer, a space, an integer, a space and R as a token of its own make a reference.
    const generation = runEnd(text, this.pos, isSpace);
    const afterGeneration = runEnd(text, generation, isDigit);
    const r = runEnd(text, afterGeneration, isSpace);
    if (generation > this.pos && afterGeneration > generation && r > afterGeneration && text[r] === "R" && classAt(text, r + 1) !== REGULAR) {
      this.pos = r + 1;
      return { ref: Number(text.slice(from, from + token.length)) };
    }
    return number;
  }

  private array(depth: number): PdfValue[] | undefined {
    this.pos++;
    const items: PdfValue[] = [];
    for (;;) {
      this.skipSpace();
      if (this.text[this.pos] === "]") {
        this.pos++;
        return items;
      }
      const item = this.value(depth + 1);
      if (item === undefined) return undefined;
      items.push(item);
    }
  }

  private dict(depth: number): PdfDict | undefined {
    this.pos += 2;
    const entries: PdfDict = new Map();
    for (;;) {
      this.skipSpace();
      if (this.text.startsWith(">>", this.pos)) {
        this.pos += 2;
        return entries;
      }
      const key = this.value(depth + 1);
      const value = isName(key) ? this.value(depth + 1) : undefined;
      if (value === undefined) return undefined;
      entries.set((key as PdfName).name, value);
    }
  }
}

/** Where stream data starts after the `stream` keyword: the next line, as readers take it. */
function dataStart(text: string, afterKeyword: number): number {
  for (let i = afterKeyword; i < text.length; i++) {
    if (text[i] === "\r") return text[i + 1] === "\n" ? i + 2 : i + 1;
    if (text[i] === "\n") return i + 1;
  }
  return text.length;
}

/** The `N` of an object header `N G obj` whose keyword starts at `at`, or undefined when it has none. */
function objectNumberBefore(text: string, at: number): number | undefined {
  const generationEnd = runStart(text, at, isSpace);
  const generation = runStart(text, generationEnd, isDigit);
  const numberEnd = runStart(text, generation, isSpace);
  const number = runStart(text, numberEnd, isDigit);
  const valid = generationEnd < at && generation < generationEnd && numberEnd < generation && number < numberEnd && numberEnd - number <= 10;
  return valid && (number === 0 || classAt(text, number - 1) !== REGULAR) ? Number(text.slice(number, numberEnd)) : undefined;
}

/** A file's objects by number and its streams in file order. */
export interface PdfObjects {
  objects: Map<number, PdfValue>;
  streams: PdfStream[];
}

/**
 * Reads the file's objects (`N G obj …`, the last definition of a number winning, as in an
 * incremental update) and its streams, each ending at its /Length when `endstream` follows there
 * (readers trust such a length), else at the first `endstream` after its start (where readers
 * look), else at the end of the file. Null when reading them would take more than a few passes over
 * the file (objects that never close, nested in each other): no document a generator writes.
 *
 * A generator that pauses after each object, so that a caller can let other work run in between
 * (a file may hold a hundred thousand objects); its return value is the result.
 */
export function* readPdfObjects(text: string): Generator<void, PdfObjects | null> {
  const objects = new Map<number, PdfValue>();
  const found: { objectNumber: number; dict: PdfDict; start: number }[] = [];
  let work = 0;
  for (let at = text.indexOf("obj"); at >= 0; at = text.indexOf("obj", at + 3)) {
    if (classAt(text, at + 3) === REGULAR) continue;
    const objectNumber = objectNumberBefore(text, at);
    if (objectNumber === undefined) continue;
    yield;
    const reader = new ValueReader(text, at + 3);
    const value = reader.value();
    if ((work += reader.pos - at) > 4 * text.length + 65536) return null;
    if (value === undefined) continue;
    objects.set(objectNumber, value);
    reader.skipSpace();
    if (value instanceof Map && reader.regular() === "stream") found.push({ objectNumber, dict: value, start: dataStart(text, reader.pos) });
  }
  const endstreams: number[] = [];
  for (let at = text.indexOf("endstream"); at >= 0; at = text.indexOf("endstream", at + 9)) endstreams.push(at);
  const firstEndstream = (from: number) => {
    let [lo, hi] = [0, endstreams.length];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (endstreams[mid] < from) lo = mid + 1;
      else hi = mid;
    }
    return endstreams[lo] ?? text.length;
  };
  const dataEnd = (start: number, length: PdfValue | undefined) => {
    if (typeof length === "number" && Number.isInteger(length) && length >= 0 && start + length <= text.length) {
      const after = new ValueReader(text, start + length);
      after.skipSpace();
      if (text.startsWith("endstream", after.pos)) return start + length;
    }
    return firstEndstream(start);
  };
  const streams: PdfStream[] = [];
  for (const stream of found) {
    yield;
    streams.push({ ...stream, end: dataEnd(stream.start, resolve(stream.dict.get("Length"), objects)) });
  }
  return { objects, streams };
}
