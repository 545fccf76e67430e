/**
 * Provider reconciliation through the public API: when a provider finished an operation and its
 * callback never reached routing, routing asks the provider once the callback is overdue, and the
 * operation ends as the callback would have ended it (balances included).
 */
import pg from "pg";
import { merchantClient, newMoid, sandboxControl } from "../../test/support/merchant";
import { pollUntil } from "../../test/support/poll";
import { admin, createShopWithKey, startStack, type Stack } from "../../test/support/stack";

let stack: Stack;
let m: ReturnType<typeof merchantClient>;
let shopId: string;
let sandboxDb: pg.Client;

beforeAll(async () => {
  stack = await startStack({ env: { routing: { PROVIDER_RECONCILE_MS: "200", PROVIDER_RECONCILE_AGE_MS: "1500" } } });
  const shop = await createShopWithKey(stack);
  shopId = shop.shopId;
  m = merchantClient(stack, shop.apiKey);
  sandboxDb = new pg.Client({ connectionString: stack.databases["provider-sandbox"] });
  await sandboxDb.connect();
}, 120_000);
afterAll(async () => {
  await sandboxDb?.end();
  await stack?.stop();
});

/** Points the provider's callbacks for the operation at a closed port: each one it sends is lost. */
const loseCallbacks = (operationId: string) => sandboxDb.query(`UPDATE sandbox_operations SET callback_url = 'http://127.0.0.1:9/lost' WHERE operation_id = $1`, [operationId]);

const body = (extra: Record<string, unknown> = {}) => ({ merchant_operation_id: newMoid("recon"), client_id: "c", method: "WT_RUB_C2C", amount: "200.00", currency: "RUB", ...extra });

describe("provider reconciliation", () => {
  it("completes a payment the provider was paid for when its callback was lost, and credits the shop once", async () => {
    const created = await m.payment(body());
    expect(created.body.status).toBe("pending");
    const operationId = created.body.operation_id;
    await loseCallbacks(operationId);
    const paid = await sandboxControl(stack).pay(operationId, { amount: "200.00" });
    expect(paid.body.callback).toMatchObject({ delivered: false });
    expect((await m.state({ operation_id: operationId })).body.status).toBe("pending");

    const done = await m.waitForStatus(operationId, "completed", 15_000);
    expect(done.body).toMatchObject({ status: "completed", actual_amount: "200.00", settlement_amount: "195.00", commission_amount: "5.00" });
    expect(await m.waitForBalance("RUB", "195.00")).toMatchObject({ balance: "195.00", reserved: "0.00" });
  }, 30_000);

  it("ends a payout the provider settled or declined without a callback reaching us, returning or consuming its reserve", async () => {
    expect((await admin(stack, "POST", `/admin/api/shops/${shopId}/adjustments`, { currency: "RUB", amount: "1000.00", reason: "funding" })).status).toBe(201);
    const settled = await m.payout(body({ amount: "100.00", number: "4111111111111111" }));
    const declined = await m.payout(body({ amount: "100.00", number: "4111111111111111" }));
    expect([settled.body.status, declined.body.status]).toEqual(["pending", "pending"]);
    await Promise.all([loseCallbacks(settled.body.operation_id), loseCallbacks(declined.body.operation_id)]);
    expect((await sandboxControl(stack).settle(settled.body.operation_id)).body.callback).toMatchObject({ delivered: false });
    expect((await sandboxControl(stack).decline(declined.body.operation_id)).body.callback).toMatchObject({ delivered: false });

    expect((await m.waitForStatus(settled.body.operation_id, "completed", 15_000)).body).toMatchObject({ actual_amount: "100.00", settlement_amount: "101.50" });
    expect((await m.waitForStatus(declined.body.operation_id, "declined", 15_000)).body.status).toBe("declined");
    // 195.00 from the payment above + 1,000.00 funding − 101.50 for the settled payout.
    expect(await m.waitForBalance("RUB", "1093.50")).toMatchObject({ balance: "1093.50", reserved: "0.00" });
  }, 30_000);

  it("leaves an operation the provider has not finished as it is", async () => {
    const created = await m.payment(body());
    await askedAboutTwice(created.body.operation_id);
    expect((await m.state({ operation_id: created.body.operation_id })).body.status).toBe("pending");
    const { rows } = await sandboxDb.query(`SELECT status FROM sandbox_operations WHERE operation_id = $1`, [created.body.operation_id]);
    expect(rows[0].status).toBe("created");
  }, 15_000);

  it("never completes a payment the provider reports paid without saying how much: nothing is booked at the requested amount", async () => {
    const created = await m.payment(body());
    const operationId = created.body.operation_id;
    // A provider whose status answer says paid but names no paid amount (its callback lost).
    await sandboxDb.query(`UPDATE sandbox_operations SET status = 'paid', paid_amount = NULL WHERE operation_id = $1`, [operationId]);
    await askedAboutTwice(operationId);
    expect((await m.state({ operation_id: operationId })).body).toMatchObject({ status: "pending", actual_amount: "0.00" });
    expect((await stack.services.routing.db.allocation.findUnique({ where: { operationId } }))?.status).toBe("active");
  }, 15_000);
});

/**
 * Waits until reconciliation has asked the provider about the operation twice: each pass that
 * finds it unfinished (or unbookable) moves its allocation's updated_at on, so two moves mean two
 * answers were read and acted on.
 */
async function askedAboutTwice(operationId: string) {
  const touchedAt = async () => (await stack.services.routing.db.allocation.findUnique({ where: { operationId } }))!.updatedAt.getTime();
  const created = await touchedAt();
  const first = await pollUntil(touchedAt, (at) => at > created, 10_000);
  expect(first).toBeGreaterThan(created);
  expect(await pollUntil(touchedAt, (at) => at > first, 10_000)).toBeGreaterThan(first);
}
