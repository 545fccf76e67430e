import { AppError, ERROR_HTTP_STATUS } from "@pgw/contracts";
import { publicError } from "@pgw/kit/http";
import type Koa from "koa";
import { html } from "./html";
import { page, type Viewer } from "./layout";

// Field names as a person reads them.
const FIELD_NAMES: Record<string, string> = {
  actual_amount: "The actual amount",
  overdraft_limit: "The overdraft limit",
  rate_limit_rps: "The rate limit",
  settlement_currency: "The settlement currency",
  webhook_url: "The webhook URL",
  merchant_id: "The merchant",
  name: "The name",
  amount: "The amount",
  reason: "The reason",
  note: "The note",
};

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const stop = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);

/** What went wrong, as sentences: the error's message, then one sentence per field it names. Never JSON. */
export function errorSentences(err: unknown): { status: number; sentences: string[] } {
  const app = publicError(err);
  const fields = app.details.map((d) => stop(`${FIELD_NAMES[d.field] ?? capital(d.field.replace(/_/g, " "))} ${d.issue}`));
  return { status: ERROR_HTTP_STATUS[app.code], sentences: [stop(capital(app.message)), ...fields] };
}

/** The error block of a page. */
export const errorBlock = (sentences: string[]) => html`<div class="error" role="alert">${sentences.map((s) => html`<p>${s}</p>`)}</div>`;

/** Renders a failed console request as a page saying what went wrong, with a way back. */
export function renderError(ctx: Koa.Context, err: unknown, viewer: Viewer | null): void {
  const { status, sentences } = errorSentences(err);
  ctx.status = status;
  ctx.type = "html";
  const back = viewer ? html`<p><a href="/admin/merchants">Back to the console</a></p>` : html`<p><a href="/admin/sign-in">Sign in</a></p>`;
  ctx.body = page(status >= 500 ? "Something went wrong" : "That did not work", viewer, html`${errorBlock(sentences)}${back}`).text;
}

/** The admin port's last word: a JSON 404 for the API (and anything else), a page for a console path. */
export const consoleAwareNotFound: Koa.Middleware = async (ctx, next) => {
  if (!ctx.path.startsWith("/admin/") || ctx.path.toLowerCase().startsWith("/admin/api")) return next();
  renderError(ctx, new AppError("not_found", "there is no such page in the console"), null);
};
