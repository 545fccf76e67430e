import type Router from "@koa/router";
import type { Client } from "@connectrpc/connect";
import type { BalanceRow, LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import type { Principal } from "../auth/key-cache";

/** The public balance row (docs/api.md, Balances) of the ledger's message. */
export const balanceRowJson = (b: BalanceRow) => ({ currency: b.currency, balance: b.balance, current_minus: b.currentMinus, reserved: b.reserved });

/** GET /v1/balances: the shop's position in every supported currency, read from the ledger. */
export function balancesRoute(router: Router, ledger: Client<typeof LedgerService>): void {
  router.get("/v1/balances", async (ctx) => {
    const { shopId } = ctx.state.auth as Principal;
    const res = await ledger.getBalances({ shopId });
    ctx.body = { balances: res.balances.map(balanceRowJson) };
  });
}
