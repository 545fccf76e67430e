import { type Logger } from "@pgw/kit/runtime";
import type Koa from "koa";
import type { GatewayClients } from "../../../clients";
import { pageAnswer, pageQuery, refuseBadQuery, type PageAfter, type PageQuery } from "../../page-query";
import { html, type Html } from "../html";
import { page, type Viewer } from "../layout";

/** What every console page handler works with. */
export interface ConsoleDeps {
  clients: GatewayClients;
  /** Evicts a shop's or key's entries from this replica's key cache after a change (as the admin API does). */
  evictKeys: (match: { shopId?: string; apiKeyId?: string }) => void;
  /** PAYMENT_PAGE_HOST: where a payment's hosted checkout is (`<host>/<operation id>`). */
  paymentPageHost: string;
  log: Logger;
}

/** The signed-in viewer (session.ts put it there). */
export const viewerOf = (ctx: Koa.Context): Viewer => ctx.state.viewer as Viewer;
/** The posted form (session.ts read it). */
export const formOf = (ctx: Koa.Context): Record<string, string> => ctx.state.form as Record<string, string>;

/** Answers a console page. */
export function render(ctx: Koa.Context, title: string, body: Html, section: string): void {
  ctx.type = "html";
  ctx.body = page(title, viewerOf(ctx), body, section).text;
}

/** After a change: back to `path` (303, so a reload does not post again) with a fixed notice code. */
export function done(ctx: Koa.Context, path: string, what: string): void {
  ctx.status = 303;
  ctx.redirect(`${path}${path.includes("?") ? "&" : "?"}done=${encodeURIComponent(what)}`);
}

/** A page of a newest-first listing from the query (`cursor`, `limit`); a bad one is a 400 sentence. */
export function listingPage(ctx: Koa.Context): PageQuery {
  const details: Parameters<typeof pageQuery>[1] = [];
  const query = pageQuery(ctx.query, details);
  refuseBadQuery(details);
  return query;
}

/** Rows of one page and the link to the next, keeping the other query parameters. */
export function paged<R>(ctx: Koa.Context, rows: R[], limit: number, keyOf: (row: R) => PageAfter): { items: R[]; next: Html | "" } {
  const { items, next_cursor } = pageAnswer(rows, limit, keyOf, (row) => row);
  if (!next_cursor) return { items, next: "" };
  const params = new URLSearchParams(ctx.querystring);
  params.set("cursor", next_cursor);
  params.delete("done");
  return { items, next: html`<p class="pager"><a href="${ctx.path}?${params.toString()}">Next page</a></p>` };
}

/** A search box (GET) over the current path. */
export const searchForm = (label: string, value: string, extra: Html | "" = "") =>
  html`<form method="get" role="search"><label><span>${label}</span><input name="q" value="${value}" size="40"></label>${extra}<button>Search</button></form>`;

/** A time as operators read it: UTC, to the second. */
export const when = (iso: string | undefined | null) => (iso ? `${iso.slice(0, 19).replace("T", " ")} UTC` : "");
