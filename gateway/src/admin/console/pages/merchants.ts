import type Router from "@koa/router";
import { AppError, isUuid } from "@pgw/contracts";
import type { Merchant, Shop } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import { rowKey } from "../../page-query";
import { html } from "../html";
import { csrfField, notice } from "../layout";
import { done, formOf, listingPage, paged, render, searchForm, viewerOf, when, type ConsoleDeps } from "./common";

const NOTICES: Record<string, string> = { merchant: "Merchant created.", shop: "Shop created." };
/** The head and rows of a table of shops. */
const shopTable = (shops: Shop[]) => {
  const rows = shops.map(
    (s) => html`<tr><td><a href="/admin/shops/${s.id}">${s.name}</a></td><td><code>${s.id}</code></td><td>${s.settlementCurrency}</td><td>${s.webhookUrl ?? html`<span class="muted">none</span>`}</td></tr>`,
  );
  return html`<thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Settles in</th><th scope="col">Webhook URL</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="4">No shops found.</td></tr>`}</tbody>`;
};

/** Merchants (search, create), one merchant's shops (list, create) and shops of every merchant (search): the ways to a shop. */
export function merchantPages(router: Router, { clients }: ConsoleDeps): void {
  router.get("/admin/merchants", async (ctx) => {
    const q = typeof ctx.query.q === "string" ? ctx.query.q : "";
    const { after, limit } = listingPage(ctx);
    const { merchants } = await clients.accounts.listMerchants({ query: q, after, limit: limit + 1 });
    const { items, next } = paged<Merchant>(ctx, merchants, limit, rowKey);
    const rows = items.map((m) => html`<tr><td><a href="/admin/merchants/${m.id}">${m.name}</a></td><td><code>${m.id}</code></td><td>${when(m.createdAt)}</td></tr>`);
    render(
      ctx,
      "Merchants",
      html`${notice(NOTICES[String(ctx.query.done)])}${searchForm("Name or id", q)}
<table><caption class="muted">Newest first</caption><thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Created</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="3">No merchants found.</td></tr>`}</tbody></table>${next}
<h2>New merchant</h2><form method="post" action="/admin/merchants">${csrfField(viewerOf(ctx))}
<label><span>Merchant name</span><input name="name" required maxlength="200"></label><button>Create merchant</button></form>`,
      "/admin/merchants",
    );
  });

  router.get("/admin/shops", async (ctx) => {
    const q = typeof ctx.query.q === "string" ? ctx.query.q : "";
    const { after, limit } = listingPage(ctx);
    const { shops } = await clients.accounts.listShops({ query: q, after, limit: limit + 1 });
    const { items, next } = paged<Shop>(ctx, shops, limit, rowKey);
    render(
      ctx,
      "Shops",
      html`${searchForm("Name or id", q)}<table><caption class="muted">Newest first, of every merchant</caption>${shopTable(items)}</table>${next}`,
      "/admin/shops",
    );
  });

  router.post("/admin/merchants", async (ctx) => {
    const { merchant } = await clients.accounts.createMerchant({ name: formOf(ctx).name ?? "" });
    done(ctx, `/admin/merchants/${merchant!.id}`, "merchant");
  });

  router.get("/admin/merchants/:id", async (ctx) => {
    if (!isUuid(ctx.params.id)) throw new AppError("not_found", "no merchant has this id");
    const [{ merchants }, { shops }] = await Promise.all([
      clients.accounts.listMerchants({ query: ctx.params.id, limit: 1 }),
      clients.accounts.listShops({ merchantId: ctx.params.id, query: "", limit: 500 }),
    ]);
    const merchant = merchants[0];
    if (!merchant) throw new AppError("not_found", "no merchant has this id");
    render(
      ctx,
      merchant.name,
      html`${notice(NOTICES[String(ctx.query.done)])}<p class="muted">Merchant <code>${merchant.id}</code>, created ${when(merchant.createdAt)}</p>
<h2>Shops</h2><table>${shopTable(shops)}</table>
<h2>New shop</h2><form method="post" action="/admin/shops">${csrfField(viewerOf(ctx))}<input type="hidden" name="merchant_id" value="${merchant.id}">
<label><span>Shop name</span><input name="name" required maxlength="200"></label>
<label><span>Settlement currency</span><select name="settlement_currency"><option>RUB</option><option>USDT</option></select></label>
<label><input type="checkbox" name="checkout_enabled" value="true"> Hosted checkout</label>
<button>Create shop</button></form>`,
      "/admin/merchants",
    );
  });
}
