// @ts-check
/**
 * Parses one PDF with PDF.js (through unpdf's serverless build) in a process of its own and sends
 * back what the review needs. Plain ESM JavaScript on purpose: PDF.js ships as ES modules only, and
 * this process runs outside any CommonJS loader or test sandbox (see pdf-reader.ts).
 */
import { extractText, getDocumentProxy, getMeta } from "unpdf";

/** @param {Uint8Array} data */
async function parse(data) {
  const pdf = await getDocumentProxy(data, { isEvalSupported: false, stopAtErrors: true, verbosity: 0 });
  const { text } = await extractText(pdf, { mergePages: true });
  const meta = await getMeta(pdf);
  const info = /** @type {Record<string, unknown>} */ (meta.info ?? {});
  const attachments = (await pdf.getAttachments()) ?? {};
  const str = (/** @type {unknown} */ v) => (typeof v === "string" && v !== "" ? v : undefined);
  return {
    text,
    producer: str(info.Producer),
    creator: str(info.Creator),
    pages: pdf.numPages,
    hasJavaScript: await hasJavaScript(pdf),
    attachments: Object.keys(attachments).length,
  };
}

const some = (/** @type {Record<string, unknown> | null | undefined} */ actions) => actions != null && Object.keys(actions).length > 0;

/**
 * Whether the document, one of its pages or one of their annotations (as far as PDF.js reports
 * them: form fields) carries JavaScript actions.
 * @param {Awaited<ReturnType<typeof getDocumentProxy>>} pdf
 */
async function hasJavaScript(pdf) {
  if (some(await pdf.getJSActions())) return true;
  for (let n = 1; n <= pdf.numPages; n++) {
    const page = await pdf.getPage(n);
    if (some(await page.getJSActions()) || (await page.getAnnotations()).some((/** @type {{ actions?: Record<string, unknown> }} */ a) => some(a.actions))) return true;
  }
  return false;
}

// One document per process: the parent kills it once answered, or at its deadline or memory limit;
// a parent gone (the IPC channel closed) ends it too.
process.on("disconnect", () => process.exit(0));
process.once("message", (/** @type {{ data: Uint8Array }} */ { data }) => {
  // PDF.js takes a plain Uint8Array, not the Buffer the channel may deliver.
  parse(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)).then(
    (result) => process.send?.({ ok: true, result }),
    (err) => process.send?.({ ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }),
  );
});
