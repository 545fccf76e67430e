/**
 * Decoders of PDF's standard filters that expand data (ISO 32000-1 §7.4), each stopping as soon as
 * its output passes a limit: what a hostile stream would inflate to is never held. Each answers the
 * decoded bytes, or null when they would be more than `max`. Data that turns corrupt part-way
 * decodes as far as a reader gets before giving up (PDF.js does the same), so corruption cannot
 * hide what came before it. Long decodes leave the event loop to other work now and then (`pace`):
 * zlib's large outputs in its thread pool, the JavaScript decoders by pausing.
 */
import zlib from "node:zlib";

export interface DecodeOptions {
  /** LZW's /EarlyChange. */
  earlyChange: number;
  /** Called now and then by a long decode: resolves once other work has had a turn (or rejects to stop it). */
  pace: () => Promise<void>;
}
export type Decoder = (data: Uint8Array, max: number, options: DecodeOptions) => Promise<Uint8Array | null>;

/**
 * An empty history in front of the data: PDF.js's inflate reads a back-reference to before the
 * start as zeros where zlib would refuse it, so zlib starts with 32 KiB of zeros to decode the same.
 */
const ZERO_WINDOW = Buffer.alloc(32 * 1024);
/** Output a zlib-family decode may make on the event loop itself (about a millisecond of work). */
const SYNC_OUTPUT = 1024 * 1024;

type ZlibStream = zlib.InflateRaw | zlib.BrotliDecompress;

/**
 * A zlib-family decoder: on the event loop while the output stays small and the data holds; else
 * again in zlib's thread pool, keeping what was decoded before any corruption.
 */
function zlibDecoder(sync: (data: Uint8Array, maxOutputLength: number) => Buffer, stream: () => ZlibStream): (data: Uint8Array, max: number) => Promise<Uint8Array | null> {
  return async (data, max) => {
    try {
      const out = sync(data, Math.min(max, SYNC_OUTPUT) + 1);
      return out.length > max ? null : out;
    } catch (err) {
      if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" && max <= SYNC_OUTPUT) return null;
      return decodeUntilError(stream(), data, max);
    }
  };
}

/** What `decoder` makes of `data` before it ends or fails, or null past `max` bytes. */
function decodeUntilError(decoder: ZlibStream, data: Uint8Array, max: number): Promise<Uint8Array | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    decoder.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      if ((size += chunk.length) > max) {
        decoder.destroy();
        resolve(null);
      }
    });
    const done = () => resolve(Buffer.concat(chunks));
    decoder.on("end", done);
    decoder.on("error", done);
    decoder.end(data);
  });
}

/** zlib-wrapped deflate, header checked as PDF.js checks it (else nothing: PDF.js reads nothing either). */
const inflate = zlibDecoder(
  (data, maxOutputLength) => zlib.inflateRawSync(data, { dictionary: ZERO_WINDOW, maxOutputLength, finishFlush: zlib.constants.Z_SYNC_FLUSH }),
  () => zlib.createInflateRaw({ dictionary: ZERO_WINDOW }),
);
const flate: Decoder = async (data, max) => {
  const [cmf, flg] = data;
  const valid = data.length >= 2 && (cmf & 0x0f) === 8 && ((cmf << 8) + flg) % 31 === 0 && !(flg & 0x20);
  return valid ? inflate(data.subarray(2), max) : new Uint8Array(0);
};

const brotli: Decoder = zlibDecoder(
  (data, maxOutputLength) => zlib.brotliDecompressSync(data, { maxOutputLength, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH }),
  () => zlib.createBrotliDecompress(),
);

/** Output of the JavaScript decoders: grows by doubling, never past `max`. */
class Output {
  private bytes = new Uint8Array(1024);
  private length = 0;
  private paced = 0;
  constructor(private readonly max: number) {}
  /** Room for `count` more bytes, at the offset answered; -1 once that would pass `max`. */
  private reserve(count: number): number {
    if (this.length + count > this.max) return -1;
    if (this.length + count > this.bytes.length) {
      const grown = new Uint8Array(Math.min(this.max, Math.max(this.bytes.length * 2, this.length + count)));
      grown.set(this.bytes.subarray(0, this.length));
      this.bytes = grown;
    }
    return (this.length += count) - count;
  }
  /** Appends `chunk`; false once past `max`. */
  append(chunk: Uint8Array): boolean {
    const at = this.reserve(chunk.length);
    if (at >= 0) this.bytes.set(chunk, at);
    return at >= 0;
  }
  /** Appends `count` copies of `byte`; false once past `max`. */
  repeat(byte: number, count: number): boolean {
    const at = this.reserve(count);
    if (at >= 0) this.bytes.fill(byte, at, at + count);
    return at >= 0;
  }
  /** Whether another 64 KiB were written since the decoder last paced itself. */
  due(): boolean {
    if (this.length - this.paced < 64 * 1024) return false;
    this.paced = this.length;
    return true;
  }
  done = () => this.bytes.subarray(0, this.length);
}

const isPdfSpace = (b: number) => b === 0 || b === 9 || b === 10 || b === 12 || b === 13 || b === 32;
/** Each byte's hex digit value, -1 for other bytes. */
const HEX_DIGIT = Int8Array.from({ length: 256 }, (_, b) => (/[0-9A-Fa-f]/.test(String.fromCharCode(b)) ? parseInt(String.fromCharCode(b), 16) : -1));

/** ASCIIHexDecode: pairs of hex digits up to `>`; white space skipped; an odd last digit padded with 0. */
const asciiHex: Decoder = async (data, max, { pace }) => {
  const out = new Output(max);
  let high = -1;
  for (let i = 0; i < data.length; i++) {
    const b = data[i];
    if (b === 0x3e) break;
    if (isPdfSpace(b)) continue;
    const digit = HEX_DIGIT[b];
    if (digit < 0) break;
    if (high < 0) {
      high = digit;
      continue;
    }
    if (!out.repeat((high << 4) | digit, 1)) return null;
    high = -1;
    if (out.due()) await pace();
  }
  return high >= 0 && !out.repeat(high << 4, 1) ? null : out.done();
};

/** ASCII85Decode: groups of five characters `!`–`u` to four bytes, `z` for four zeros, up to `~>`. */
const ascii85: Decoder = async (data, max, { pace }) => {
  const out = new Output(max);
  const group: number[] = [];
  const flush = (count: number) => {
    while (group.length < 5) group.push(84);
    const value = group.reduce((acc, d) => acc * 85 + d, 0);
    group.length = 0;
    return out.append(Uint8Array.from({ length: count }, (_, i) => Math.floor(value / 256 ** (3 - i)) & 0xff));
  };
  for (let i = 0; i < data.length; i++) {
    const b = data[i];
    if (b === 0x7e) break;
    if (isPdfSpace(b)) continue;
    if (b === 0x7a && group.length === 0) {
      if (!out.repeat(0, 4)) return null;
    } else if (b >= 0x21 && b <= 0x75) {
      group.push(b - 0x21);
      if (group.length === 5 && !flush(4)) return null;
    } else break;
    if (out.due()) await pace();
  }
  return group.length > 1 && !flush(group.length - 1) ? null : out.done();
};

/** RunLengthDecode: a length byte n then n + 1 literal bytes (n < 128), or 257 - n copies of one byte (n > 128); 128 ends. */
const runLength: Decoder = async (data, max, { pace }) => {
  const out = new Output(max);
  for (let i = 0; i < data.length; ) {
    const n = data[i++];
    if (n === 128) break;
    const literal = n < 128;
    const ok = literal ? out.append(data.subarray(i, i + n + 1)) : i >= data.length || out.repeat(data[i], 257 - n);
    if (!ok) return null;
    i += literal ? n + 1 : 1;
    if (out.due()) await pace();
  }
  return out.done();
};

/**
 * LZWDecode: codes of 9 to 12 bits; 256 clears the table, 257 ends; the code width grows one code
 * early unless /EarlyChange is 0. Decoded as PDF.js decodes it, a code not yet in the table included.
 */
const lzw: Decoder = async (data, max, { earlyChange, pace }) => {
  const out = new Output(max);
  const prefix = new Uint16Array(4096);
  const last = new Uint8Array(4096);
  const lengths = new Uint16Array(4096);
  for (let c = 0; c < 256; c++) [last[c], lengths[c]] = [c, 1];
  const sequence = new Uint8Array(4097);
  let [length, next, width, previous, buffer, bits, position] = [0, 258, 9, 0, 0, 0, 0];
  for (;;) {
    while (bits < width && position < data.length) {
      buffer = ((buffer << 8) | data[position++]) & 0xffffff;
      bits += 8;
    }
    if (bits < width) break;
    const code = (buffer >>> (bits - width)) & ((1 << width) - 1);
    bits -= width;
    const hasPrevious = length > 0;
    if (code < 256) [sequence[0], length] = [code, 1];
    else if (code === 256) {
      [next, width, length] = [258, 9, 0];
      continue;
    } else if (code === 257) break;
    else if (code < next) {
      length = lengths[code];
      for (let k = length - 1, c = code; k >= 0; k--, c = prefix[c]) sequence[k] = last[c];
    } else sequence[length++] = sequence[0]; // the code being defined: the previous sequence and its first byte
    if (hasPrevious && next < 4096) {
      [prefix[next], last[next], lengths[next]] = [previous, sequence[0], lengths[previous] + 1];
      next++;
      width = Math.min(12, 32 - Math.clz32(next + earlyChange));
    }
    previous = code;
    if (!out.append(sequence.subarray(0, length))) return null;
    if (out.due()) await pace();
  }
  return out.done();
};

/** The decoders by filter name, abbreviations (used in inline images, accepted by readers anywhere) included. */
export const DECODERS: Readonly<Record<string, Decoder>> = {
  FlateDecode: flate,
  Fl: flate,
  BrotliDecode: brotli,
  LZWDecode: lzw,
  LZW: lzw,
  RunLengthDecode: runLength,
  RL: runLength,
  ASCIIHexDecode: asciiHex,
  AHx: asciiHex,
  ASCII85Decode: ascii85,
  A85: ascii85,
};
