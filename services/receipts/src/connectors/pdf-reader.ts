/**
 * The PDF parser connector: PDF.js, a maintained parser, run in a child process per document, once
 * what the document's streams decode to has been measured within a limit (pdf-streams.ts): a
 * document past it is not parsed at all.
 *
 * Why a process: the file is untrusted input, and what PDF.js decodes from it (inflated streams)
 * lives in ArrayBuffers, outside any JavaScript heap limit: a worker thread's resourceLimits let a
 * 1 MB file inflating to 1 GB take the whole service. A process of its own gets a heap limit, a
 * watchdog on its resident memory (killed past `maxRssMb`) and a deadline, and takes nothing with
 * it when killed. It is started with an empty environment (a parser exploited through its input
 * finds no secrets there). PDF.js is ESM-only, which such a process loads natively whatever module
 * system runs this service (CommonJS under tsx, jest's sandbox in tests).
 */
import { concurrencyLimit } from "@pgw/kit/runtime";
import { fork } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { ParsedPdf } from "../domain/pdf-structure";
import { decodeStreams } from "./pdf-streams";

/** A document PDF.js could not parse (or not within the deadline and the memory limit). */
export class PdfParseError extends Error {}

export interface PdfReaderOptions {
  /** Deadline of one parse (measuring the streams, then PDF.js), ms. */
  timeoutMs: number;
  /** What a document's streams may decode to in all, bytes; more is not parsed (PdfDecodeLimitError). */
  maxDecodedBytes: number;
  /** Resident memory at which the parsing process is killed, MiB; its JavaScript heap gets half. */
  maxRssMb: number;
  /**
   * Parses running at once; more wait for a free slot (the deadline starts with the parse), shared
   * fairly between shops: one shop's queue delays another shop's upload by one parse at most. Each
   * may grow to `maxRssMb`, so this bounds what hostile uploads arriving together can take.
   */
  maxConcurrent?: number;
}

/** Parses PDFs: text of every page, producer / creator, scripts and attachments. */
export interface PdfReader {
  /** Parses `bytes`, an upload of `shopId` (whose turn in the queue it takes). */
  read(bytes: Uint8Array, shopId: string): Promise<ParsedPdf>;
}

const PROCESS_FILE = path.join(__dirname, "pdf-process.mjs");
/** How often the parsing process's resident memory is read, ms. */
const WATCH_MS = 10;

type ProcessAnswer = { ok: true; result: Omit<ParsedPdf, "objectStreams"> } | { ok: false; error: string };

/** A reader that parses each document in a fresh process, `maxConcurrent` (default 2) at a time. */
export function createPdfReader(options: PdfReaderOptions): PdfReader {
  const parsing = concurrencyLimit(options.maxConcurrent ?? 2);
  return {
    read(bytes, shopId) {
      return parsing.run(shopId, () => readPdf(bytes, options));
    },
  };
}

const overdue = (options: PdfReaderOptions) => new PdfParseError(`parse did not finish within ${options.timeoutMs} ms`);

/** Measures what `bytes` decode to, then parses them, both within one deadline. */
async function readPdf(bytes: Uint8Array, options: PdfReaderOptions): Promise<ParsedPdf> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const { objectStreams } = await decodeStreams(bytes, options.maxDecodedBytes, deadline).catch((err: unknown) => {
    throw deadline.aborted ? overdue(options) : err;
  });
  if (deadline.aborted) throw overdue(options);
  return { ...(await parseInProcess(bytes, options, deadline)), objectStreams };
}

/**
 * Resident memory of process `pid` in MiB, from Linux's /proc; 0 when it cannot be read (the process
 * is gone, or the system has no /proc: there only the heap limit and the deadline hold).
 */
export function residentMb(pid: number | undefined): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "latin1"))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

function parseInProcess(bytes: Uint8Array, options: PdfReaderOptions, deadline: AbortSignal): Promise<Omit<ParsedPdf, "objectStreams">> {
  return new Promise((resolve, reject) => {
    const child = fork(PROCESS_FILE, [], {
      execArgv: [`--max-old-space-size=${Math.max(16, Math.floor(options.maxRssMb / 2))}`],
      env: {},
      serialization: "advanced",
      stdio: ["ignore", "ignore", "ignore", "ipc"],
    });
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      deadline.removeEventListener("abort", timeUp);
      clearInterval(watchdog);
      child.kill("SIGKILL");
      fn();
    };
    const fail = (reason: string) => finish(() => reject(new PdfParseError(reason)));
    const watchdog = setInterval(() => {
      if (residentMb(child.pid) > options.maxRssMb) fail(`the parser went over its memory limit of ${options.maxRssMb} MiB`);
    }, WATCH_MS);
    const timeUp = () => finish(() => reject(overdue(options)));
    deadline.addEventListener("abort", timeUp);
    child.on("message", (answer: ProcessAnswer) => finish(() => (answer.ok ? resolve(answer.result) : reject(new PdfParseError(answer.error)))));
    child.on("error", (err) => fail(err.message));
    child.on("exit", (code, signal) => fail(`parser exited with ${signal ?? `code ${code}`}`));
    child.send({ data: bytes });
  });
}
