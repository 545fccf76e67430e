import { sql } from "kysely";
import { request } from "../../test/support/http";
import { admin, createShopWithKey, startStack, type Stack } from "../../test/support/stack";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 120_000);
afterAll(() => stack?.stop());

describe("GET /v1/balances", () => {
  // Runs before the test below, which stops the ledger for the rest of the file.
  it("answers 500 ledger_inconsistent, and no balance at all, when a materialised balance disagrees with its journal", async () => {
    const shop = await createShopWithKey(stack);
    const get = () => request(`${stack.publicUrl}/v1/balances`, { headers: { "X-API-Key": shop.apiKey } });
    expect((await admin(stack, "POST", `/admin/api/shops/${shop.shopId}/adjustments`, { currency: "RUB", amount: "100.00", reason: "funding" })).status).toBe(201);
    expect((await get()).body.balances).toContainEqual({ currency: "RUB", balance: "100.00", current_minus: "0.00", reserved: "0.00" });

    // The RUB account's materialised balance drifts from its postings (a write that bypassed the journal).
    const drifted = await stack.services.ledger.sql
      .updateTable("accounts")
      .set({ balance: sql<string>`balance + 1` })
      .where("shopId", "=", shop.shopId)
      .where("kind", "=", "available")
      .where("currency", "=", "RUB")
      .executeTakeFirst();
    expect(drifted.numUpdatedRows).toBe(1n);
    const res = await get();
    expect(res.status).toBe(500);
    // Only the error: neither the consistent USDT row nor a zero in place of RUB.
    expect(res.body).toEqual({ error: { code: "ledger_inconsistent", message: expect.any(String), details: [] } });
  });

  it("answers 503 with Retry-After while the ledger is unreachable, never a partial or zero answer", async () => {
    const { apiKey } = await createShopWithKey(stack);
    const get = () => request(`${stack.publicUrl}/v1/balances`, { headers: { "X-API-Key": apiKey } });
    expect((await get()).status).toBe(200);

    const ledger = stack.services.ledger;
    await ledger.stop();
    ledger.stop = async () => undefined; // already stopped: the stack's teardown must not stop it twice
    const res = await get();
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("unavailable");
    expect(res.body).not.toHaveProperty("balances");
    expect(Number(res.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  });
});
