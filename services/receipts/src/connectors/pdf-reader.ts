/**
 * The PDF parser connector: PDF.js, a maintained parser, run in a worker thread per document.
 *
 * Why a worker: the file is untrusted input, so parsing gets its own heap limit and a deadline
 * after which the thread is terminated (a hostile PDF cannot stall or exhaust the service); and
 * PDF.js is ESM-only, which a worker loads natively whatever module system runs this service
 * (CommonJS under tsx, jest's sandbox in tests).
 */
import { concurrencyLimit } from "@pgw/kit";
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { ParsedPdf } from "../domain/pdf-structure";

/** A document PDF.js could not parse (or not within the deadline). */
export class PdfParseError extends Error {}

export interface PdfReaderOptions {
  /** Deadline of one parse, ms. */
  timeoutMs: number;
  /** Heap limit of the parsing thread, MiB. */
  maxHeapMb?: number;
  /**
   * Parses running at once; more wait for a free slot (the deadline starts with the parse), shared
   * fairly between shops: one shop's queue delays another shop's upload by one parse at most. Each
   * may grow to `maxHeapMb`, so this bounds what hostile uploads arriving together can take.
   */
  maxConcurrent?: number;
}

/** Parses PDFs: text of every page, producer / creator, scripts and attachments. */
export interface PdfReader {
  /** Parses `bytes`, an upload of `shopId` (whose turn in the queue it takes). */
  read(bytes: Uint8Array, shopId: string): Promise<ParsedPdf>;
}

const WORKER_FILE = path.join(__dirname, "pdf-worker.mjs");

type WorkerAnswer = { ok: true; result: ParsedPdf } | { ok: false; error: string };

/** A reader that parses each document in a fresh worker thread, `maxConcurrent` (default 2) at a time. */
export function createPdfReader(options: PdfReaderOptions): PdfReader {
  const parsing = concurrencyLimit(options.maxConcurrent ?? 2);
  return {
    read(bytes, shopId) {
      return parsing.run(shopId, () => parseInWorker(bytes, options));
    },
  };
}

function parseInWorker(bytes: Uint8Array, options: PdfReaderOptions): Promise<ParsedPdf> {
  return new Promise<ParsedPdf>((resolve, reject) => {
    const data = new Uint8Array(bytes); // a copy: the worker may transfer or detach it
    const worker = new Worker(WORKER_FILE, {
      workerData: { data },
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? 256 },
      stdout: true,
      stderr: true,
    });
    // PDF.js may print warnings; they are not read, only drained.
    worker.stdout.resume();
    worker.stderr.resume();
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
      void worker.terminate();
    };
    const timer = setTimeout(() => finish(() => reject(new PdfParseError(`parse did not finish within ${options.timeoutMs} ms`))), options.timeoutMs);
    worker.on("message", (answer: WorkerAnswer) => finish(() => (answer.ok ? resolve(answer.result) : reject(new PdfParseError(answer.error)))));
    worker.on("error", (err) => finish(() => reject(new PdfParseError(err.message))));
    worker.on("exit", (code) => finish(() => reject(new PdfParseError(`parser exited with code ${code}`))));
  });
}
