import type { Delivery } from "@pgw/proto/gen/pgw/notifier/v1/notifier_pb";
import type { ShopPosting, BalanceRow } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import type { ApiKey, Shop } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import { randomUUID } from "node:crypto";
import { html, type Html } from "../html";
import { csrfField, type Viewer } from "../layout";
import { when } from "./common";

/** Everything the shop page shows, read by shop.ts. */
export interface ShopView {
  shop: Shop;
  keys: ApiKey[];
  deliveries: Delivery[];
  balances: BalanceRow[];
  postings: ShopPosting[];
}

const selected = (on: boolean) => (on ? html` selected` : "");

function settingsForm(shop: Shop, viewer: Viewer): Html {
  return html`<h2 id="settings">Settings</h2><form method="post" action="/admin/shops/${shop.id}/settings">${csrfField(viewer)}
<label><span>Shop name</span><input name="name" value="${shop.name}" required maxlength="200"></label>
<label><span>Webhook URL (empty: none)</span><input name="webhook_url" type="url" value="${shop.webhookUrl ?? ""}" size="40"></label>
<label><span>Settlement currency</span><select name="settlement_currency"><option${selected(shop.settlementCurrency === "RUB")}>RUB</option><option${selected(shop.settlementCurrency === "USDT")}>USDT</option></select></label>
<label><span>Overdraft limit</span><input name="overdraft_limit" value="${shop.overdraftLimit}" inputmode="decimal" size="14"></label>
<label><span>Rate limit (requests/s)</span><input name="rate_limit_rps" value="${shop.rateLimitRps}" inputmode="numeric" size="8"></label>
<label><input type="checkbox" name="checkout_enabled" value="true"${shop.checkoutEnabled ? html` checked` : ""}> Hosted checkout</label>
<button>Save settings</button></form>`;
}

function keysSection(view: ShopView, viewer: Viewer): Html {
  const rows = view.keys.map(
    (k) => html`<tr><td>${k.label || html`<span class="muted">no label</span>`}</td><td><code>${k.prefix}…</code></td><td>${when(k.createdAt)}</td>
<td>${k.revokedAt ? `revoked ${when(k.revokedAt)}` : html`active — <a href="/admin/shops/${view.shop.id}/api-keys/${k.id}/revoke">Revoke</a>`}</td></tr>`,
  );
  return html`<h2 id="api-keys">API keys</h2><table><thead><tr><th scope="col">Label</th><th scope="col">Key</th><th scope="col">Issued</th><th scope="col">State</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="4">No keys yet.</td></tr>`}</tbody></table>
<form method="post" action="/admin/shops/${view.shop.id}/api-keys">${csrfField(viewer)}<label><span>Label of a new key</span><input name="label" maxlength="200"></label><button>Issue API key</button></form>`;
}

function webhookSection(view: ShopView, viewer: Viewer): Html {
  const rows = view.deliveries.map(
    (d) => html`<tr><td>${when(d.createdAt)}</td><td>${d.eventType}</td><td><a href="/admin/operations/${d.operationId}">${d.operationId.slice(0, 8)}…</a></td><td>${d.status}</td><td>${d.attempts}</td>
<td>${d.attemptLog.at(-1)?.statusCode || d.attemptLog.at(-1)?.error || ""}</td>
<td><form method="post" action="/admin/shops/${view.shop.id}/deliveries/${d.id}/redeliver" class="inline">${csrfField(viewer)}<button class="secondary" aria-label="Redeliver ${d.eventType} of ${when(d.createdAt)}">Redeliver</button></form></td></tr>`,
  );
  return html`<h2 id="webhook">Webhook</h2><p>Endpoint: ${view.shop.webhookUrl ? html`<code>${view.shop.webhookUrl}</code>` : "none set (change it under Settings)"}.</p>
<form method="post" action="/admin/shops/${view.shop.id}/webhook-secret">${csrfField(viewer)}<button class="secondary">Rotate signing secret</button>
<span class="muted">The new secret is shown once; the previous one keeps signing for 24 hours.</span></form>
<h3>Deliveries</h3><table><thead><tr><th scope="col">Created</th><th scope="col">Event</th><th scope="col">Operation</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col"><span class="muted">Action</span></th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="7">No deliveries yet.</td></tr>`}</tbody></table>`;
}

function moneySection(view: ShopView, viewer: Viewer): Html {
  const balances = view.balances.map((b) => html`<tr><td>${b.currency}</td><td>${b.balance}</td><td>${b.reserved}</td></tr>`);
  const postings = view.postings.map(
    (p) => html`<tr><td>${when(p.createdAt)}</td><td>${p.kind}</td><td>${p.account}</td><td>${p.amount} ${p.currency}</td><td>${p.balanceAfter}</td><td>${p.reason}</td><td>${p.actor}</td></tr>`,
  );
  return html`<h2 id="balances">Balances</h2><table><thead><tr><th scope="col">Currency</th><th scope="col">Available</th><th scope="col">Reserved</th></tr></thead><tbody>${balances}</tbody></table>
<h3>Journal</h3><table><thead><tr><th scope="col">Time</th><th scope="col">Entry</th><th scope="col">Account</th><th scope="col">Amount</th><th scope="col">Balance after</th><th scope="col">Reason</th><th scope="col">By</th></tr></thead>
<tbody>${postings.length ? postings : html`<tr><td colspan="7">No postings yet.</td></tr>`}</tbody></table>
<h3>Adjustment</h3><form method="post" action="/admin/shops/${view.shop.id}/adjustments">${csrfField(viewer)}<input type="hidden" name="idempotency_key" value="${randomUUID()}">
<label><span>Currency</span><select name="currency"><option>RUB</option><option>USDT</option></select></label>
<label><span>Amount (negative debits)</span><input name="amount" required inputmode="decimal" size="12"></label>
<label><span>Reason</span><input name="reason" required maxlength="2048" size="40"></label><button>Post adjustment</button></form>`;
}

/** The shop page's body (the adjustment form carries its own idempotency key: a form sent twice posts once): settings, API keys, webhook and deliveries, balances with the journal and adjustments. */
export function shopBody(view: ShopView, viewer: Viewer): Html {
  const { shop } = view;
  return html`<p class="muted">Shop <code>${shop.id}</code> of merchant <a href="/admin/merchants/${shop.merchantId}">${shop.merchantId}</a> ·
<a href="/admin/operations?shop_id=${shop.id}">Operations of this shop</a></p>
${settingsForm(shop, viewer)}${keysSection(view, viewer)}${webhookSection(view, viewer)}${moneySection(view, viewer)}`;
}
