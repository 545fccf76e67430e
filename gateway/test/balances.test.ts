import { request } from "../../test/support/http";
import { createShopWithKey, startStack, type Stack } from "../../test/support/stack";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 120_000);
afterAll(() => stack?.stop());

describe("GET /v1/balances", () => {
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
