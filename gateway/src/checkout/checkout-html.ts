import type { Operation } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { escapeHtml } from "../http/escape-html";
import type { CheckoutAssets } from "./assets";
import { checkoutState, isFinal, SHOWN_WHILE, shows, utcMinute, type PagePart } from "./checkout-view";
import { TEXTS, type Language, type UploadProblem } from "./translations";

/** How often the page asks for the payment's status. */
export const STATUS_POLL_MS = 3000;

/** What every checkout page needs besides the payment: the payer's language and the static files. */
export interface PageContext {
  language: Language;
  assets: Pick<CheckoutAssets, "script" | "stylesheet">;
}

function page({ language, assets }: PageContext, main: string, mainAttributes = ""): string {
  return (
    `<!doctype html><html lang="${language}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${escapeHtml(TEXTS[language].pageTitle)}</title><link rel="stylesheet" href="${escapeHtml(assets.stylesheet)}">` +
    `<script src="${escapeHtml(assets.script)}" defer></script></head>` +
    `<body><main id="checkout"${mainAttributes}>${main}</main></body></html>`
  );
}

/** The statuses showing `part`, for the page's script to remove it when the status leaves them. */
const shownWhile = (part: PagePart) => `data-while="${SHOWN_WHILE[part].join(" ")}"`;

/**
 * A value the payer may need to type elsewhere (`unit` is shown, not copied), with a copy button the
 * script reveals while there is something to pay into (`copy`: rendered at all).
 */
function field(id: string, label: string, value: string, context: PageContext, { unit = "", copy = true } = {}): string {
  const t = TEXTS[context.language];
  const button = copy
    ? `<button type="button" class="copy" ${shownWhile("requisites")} data-copy="${id}" data-copied="${escapeHtml(t.copied)}" aria-describedby="${id}-label" hidden>${escapeHtml(t.copy)}</button>`
    : "";
  return (
    `<div class="field"><dt id="${id}-label">${escapeHtml(label)}</dt><dd><span id="${id}" class="value">${escapeHtml(value)}</span>` +
    `${unit ? ` <span class="unit">${escapeHtml(unit)}</span>` : ""}${button}</dd></div>`
  );
}

function requisitesHtml(op: Operation, context: PageContext): string {
  const t = TEXTS[context.language];
  const rows = [
    op.number ? field("number", t.number, op.number, context) : "",
    op.name ? field("recipient", t.recipient, op.name, context) : "",
    (op.banknameDetails ?? op.bankname) ? field("bank", t.bank, (op.banknameDetails ?? op.bankname)!, context) : "",
  ].join("");
  return rows ? `<section class="requisites" ${shownWhile("requisites")} aria-labelledby="requisites-title"><h2 id="requisites-title">${escapeHtml(t.requisites)}</h2><dl>${rows}</dl></section>` : "";
}

function countdownHtml(expiresAt: string, context: PageContext): string {
  const t = TEXTS[context.language];
  return `<p class="countdown" ${shownWhile("countdown")}>${escapeHtml(t.timeLeft)} <time id="countdown" datetime="${escapeHtml(expiresAt)}">${escapeHtml(t.payBefore(utcMinute(expiresAt)))}</time></p>`;
}

function receiptFormHtml(op: Operation, context: PageContext): string {
  const t = TEXTS[context.language];
  return (
    `<form class="receipt" ${shownWhile("receipt")} method="post" action="/pay/${escapeHtml(op.operationId)}/receipt" enctype="multipart/form-data">` +
    `<label for="receipt">${escapeHtml(t.receiptLabel)}</label><p id="receipt-hint" class="hint">${escapeHtml(t.receiptHint)}</p>` +
    `<input id="receipt" type="file" name="receipt" accept=".pdf,.jpg,.jpeg,.png,application/pdf,image/jpeg,image/png" aria-describedby="receipt-hint" required>` +
    `<button type="submit">${escapeHtml(t.sendReceipt)}</button></form>`
  );
}

/**
 * The checkout page of a payment: the amount, its state in the payer's words, the requisites, the
 * time left and the receipt form in the statuses that show them (SHOWN_WHILE), and, after a refused
 * upload, why it was refused. The page's script keeps the status current; without script the page
 * is complete as it loads and the form still posts.
 */
export function checkoutHtml(op: Operation, context: PageContext, problem?: UploadProblem): string {
  const t = TEXTS[context.language];
  const state = t.states[checkoutState(op.status)];
  const main =
    `<h1>${escapeHtml(t.pageTitle)}</h1>` +
    `<dl class="amount">${field("amount", t.amount, op.expectedAmount, context, { unit: op.currency, copy: shows("requisites", op.status) })}</dl>` +
    `<section class="state" aria-live="polite"><h2 id="status" data-status="${escapeHtml(op.status)}">${escapeHtml(state.title)}</h2><p id="status-message">${escapeHtml(state.message)}</p></section>` +
    (problem ? `<p class="problem" role="alert">${escapeHtml(t.uploadProblems[problem])}</p>` : "") +
    (op.expiresAt && shows("countdown", op.status) ? countdownHtml(op.expiresAt, context) : "") +
    (shows("requisites", op.status) ? requisitesHtml(op, context) : "") +
    (shows("receipt", op.status) ? receiptFormHtml(op, context) : "") +
    (isFinal(op.status) ? "" : `<noscript><p><a href="/pay/${escapeHtml(op.operationId)}">${escapeHtml(t.refresh)}</a></p></noscript>`);
  const polling = isFinal(op.status) ? "" : ` data-status-url="/pay/${escapeHtml(op.operationId)}/status" data-poll-ms="${STATUS_POLL_MS}"`;
  return page(context, main, polling);
}

/** The page of a link that leads to no payment. */
export function notFoundHtml(context: PageContext): string {
  const state = TEXTS[context.language].states.not_found;
  return page(context, `<h1>${escapeHtml(state.title)}</h1><p>${escapeHtml(state.message)}</p>`);
}
