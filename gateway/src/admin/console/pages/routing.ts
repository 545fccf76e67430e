import type Router from "@koa/router";
import { html } from "../html";
import { render, type ConsoleDeps } from "./common";

/** The routing table, read-only: which routes serve which method and currency, in priority order. */
export function routingPages(router: Router, { clients }: ConsoleDeps): void {
  router.get("/admin/routes", async (ctx) => {
    const { routes } = await clients.routing.listRoutes({});
    const rows = routes.map(
      (r) => html`<tr><td>${r.type}</td><td>${r.method}</td><td>${r.currency} → ${r.settlementCurrency}</td><td>${r.priority}</td><td>${r.minAmount}–${r.maxAmount}</td>
<td>${r.requiresReceipt ? "yes" : "no"}</td><td>${r.autoConversion ? "yes" : "no"}</td><td>${r.enabled ? "enabled" : "disabled"}</td></tr>`,
    );
    render(
      ctx,
      "Routes and providers",
      html`<p>Read-only: routes are configured in the routing service.</p><table><thead><tr><th scope="col">Type</th><th scope="col">Method</th><th scope="col">Currency</th><th scope="col">Priority</th><th scope="col">Amounts</th><th scope="col">Receipt</th><th scope="col">Conversion</th><th scope="col">State</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="8">No routes.</td></tr>`}</tbody></table>`,
      "/admin/routes",
    );
  });
}
