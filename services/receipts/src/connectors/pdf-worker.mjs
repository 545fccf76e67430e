// @ts-check
/**
 * Parses one PDF with PDF.js (through unpdf's serverless build) in a worker thread and posts back
 * what the review needs. Plain ESM JavaScript on purpose: PDF.js ships as ES modules only, and a
 * worker runs outside any CommonJS loader or test sandbox (see pdf-reader.ts).
 */
import { parentPort, workerData } from "node:worker_threads";
import { extractText, getDocumentProxy, getMeta } from "unpdf";

/** @param {Uint8Array} data */
async function parse(data) {
  // The thread is terminated after one document, which frees everything PDF.js holds.
  const pdf = await getDocumentProxy(data, { isEvalSupported: false, stopAtErrors: true, verbosity: 0 });
  const { text } = await extractText(pdf, { mergePages: true });
  const meta = await getMeta(pdf);
  const info = /** @type {Record<string, unknown>} */ (meta.info ?? {});
  const attachments = (await pdf.getAttachments()) ?? {};
  const jsActions = await pdf.getJSActions();
  const str = (/** @type {unknown} */ v) => (typeof v === "string" && v !== "" ? v : undefined);
  return {
    text,
    producer: str(info.Producer),
    creator: str(info.Creator),
    pages: pdf.numPages,
    hasJavaScript: jsActions !== null && Object.keys(jsActions).length > 0,
    attachments: Object.keys(attachments).length,
  };
}

parse(workerData.data).then(
  (result) => parentPort?.postMessage({ ok: true, result }),
  (err) => parentPort?.postMessage({ ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }),
);
