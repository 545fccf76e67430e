/**
 * A provider that places an operation after its create timed out (unsettled-placements.ts): the
 * create answered 503 and nothing was booked, so what the provider placed late is found by operation
 * id and cancelled there, before it can pay out money no shop was charged for. A create the provider
 * never placed is looked for again later, and nothing is cancelled.
 */
import pg from "pg";
import { merchantClient, newMoid, sandboxControl } from "../../test/support/merchant";
import { pollUntil } from "../../test/support/poll";
import { admin, createShopWithKey, startStack, type Stack } from "../../test/support/stack";

let stack: Stack;
let m: ReturnType<typeof merchantClient>;
let sandbox: ReturnType<typeof sandboxControl>;
let routingDb: pg.Client;

beforeAll(async () => {
  stack = await startStack({ env: { operations: { CREATE_DEADLINE_MS: "1500" }, routing: { UNSETTLED_CHECK_MS: "200" } } });
  const shop = await createShopWithKey(stack);
  expect((await admin(stack, "POST", `/admin/api/shops/${shop.shopId}/adjustments`, { currency: "RUB", amount: "500.00", reason: "prefunding" })).status).toBe(201);
  m = merchantClient(stack, shop.apiKey);
  sandbox = sandboxControl(stack);
  routingDb = new pg.Client({ connectionString: stack.databases.routing });
  await routingDb.connect();
}, 120_000);
afterAll(async () => {
  await routingDb?.end();
  await stack?.stop();
});
afterEach(() => sandbox.reset());

const payoutBody = () => ({ merchant_operation_id: newMoid("late"), client_id: "c1", method: "WT_RUB_C2C", amount: "50.00", currency: "RUB", number: "4111111111111111" });

/** The unsettled placement the last create left (the public API never shows its operation id). */
async function lastUnsettled(): Promise<{ operation_id: string; outcome: string | null; checks: number }> {
  const { rows } = await routingDb.query(`SELECT operation_id::text, outcome, checks FROM unsettled_placements ORDER BY created_at DESC LIMIT 1`);
  return rows[0];
}

const atProvider = (operationId: string) => fetch(`${stack.sandboxUrl}/api/v1/operations?operation_id=${operationId}`).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

test("a payout the provider placed after its create timed out is cancelled there, and cannot be paid out", async () => {
  await sandbox.scenario({ method: "WT_RUB_C2C", accept: "accept", accept_delay_ms: 2500 });
  const refused = await m.payout(payoutBody());
  expect(refused.status).toBe(503);
  expect(refused.body.error.code).toBe("no_provider_available");
  const { operation_id: operationId } = await lastUnsettled();

  const settled = await pollUntil(lastUnsettled, (row) => row.outcome !== null, 15_000, 100);
  expect(settled).toMatchObject({ operation_id: operationId, outcome: "cancelled" });
  expect((await atProvider(operationId)).body).toMatchObject({ operation_id: operationId, status: "cancelled" });
  expect((await sandbox.settle(operationId)).status).toBe(412);
  expect(await m.waitForBalance("RUB", "500.00")).toMatchObject({ balance: "500.00", reserved: "0.00" });
});

test("a payout placed after the first check is found and cancelled at a recheck seconds later", async () => {
  // The first check comes 2 s after the 1.5 s budget (about 3.5 s), rechecks every 5 s (8.5 s, 13.5 s);
  // the provider places it at 12 s, long after the first check, however late that runs.
  await sandbox.scenario({ method: "WT_RUB_C2C", accept: "accept", accept_delay_ms: 12_000 });
  expect((await m.payout(payoutBody())).status).toBe(503);
  const { operation_id: operationId } = await lastUnsettled();
  const settled = await pollUntil(lastUnsettled, (row) => row.outcome !== null, 30_000, 100);
  expect(settled).toMatchObject({ operation_id: operationId, outcome: "cancelled" });
  expect(settled.checks).toBeGreaterThan(1);
  expect((await atProvider(operationId)).body).toMatchObject({ status: "cancelled" });
}, 45_000);

test("a create the provider never placed is looked for again later, and nothing is cancelled", async () => {
  await sandbox.scenario({ method: "WT_RUB_C2C", accept: "timeout" });
  expect((await m.payout(payoutBody())).status).toBe(503);
  const { operation_id: operationId } = await lastUnsettled();
  const looked = await pollUntil(lastUnsettled, (row) => row.checks > 0, 10_000, 100);
  expect(looked).toMatchObject({ operation_id: operationId, outcome: null, checks: 1 });
  expect((await atProvider(operationId)).status).toBe(404);
});

