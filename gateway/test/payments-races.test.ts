import { createClient } from "@connectrpc/connect";
import { createPeerTransport } from "@pgw/kit/rpc";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import fc from "fast-check";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { operationKeyHash } from "../../services/operations/src/store";
import { consumerCaughtUp } from "../../test/support/consumers";
import { merchantClient, newMoid, sandboxControl } from "../../test/support/merchant";
import { pollUntil } from "../../test/support/poll";
import { admin, createShopWithKey, startStack, type Stack } from "../../test/support/stack";

let stack: Stack;
let m: ReturnType<typeof merchantClient>;
let shop: Awaited<ReturnType<typeof createShopWithKey>>;
let sandbox: ReturnType<typeof sandboxControl>;

beforeAll(async () => {
  stack = await startStack();
  shop = await createShopWithKey(stack, { rate_limit_rps: 100000 });
  m = merchantClient(stack, shop.apiKey);
  sandbox = sandboxControl(stack);
}, 120_000);
afterAll(() => stack?.stop());

const DETAILS = ["number", "name", "bankname", "bankname_details"];
const hasDetails = (op: Record<string, unknown>) => DETAILS.some((d) => d in op);

describe("cancel versus create", () => {
  it("never lets a cancelled payment show requisites issued after the cancel, nor complete (200 random races)", async () => {
    await sandbox.scenario({ method: "WT_RUB_C2C", accept: "accept", accept_delay_ms: 250 });
    // Half the cancels aim inside the provider's 250 ms acceptance, half well after it, so both
    // orders happen however loaded the machine is; where each one lands is still up to the race.
    const races = Array.from({ length: 200 }, (_, i) => ({
      moid: newMoid(`race${i}`),
      cancelAfterMs: Math.floor(i % 2 === 0 ? Math.random() * 200 : 300 + Math.random() * 1200),
    }));
    const outcomes: { moid: string; cancel: { status: number; body: any }; create: { status: number; body: any } }[] = [];
    for (let i = 0; i < races.length; i += 25) {
      outcomes.push(
        ...(await Promise.all(
          races.slice(i, i + 25).map(async ({ moid, cancelAfterMs }) => {
            const creating = m.payment({ merchant_operation_id: moid, client_id: "c", method: "WT_RUB_C2C", amount: "10.00", currency: "RUB" });
            await new Promise((r) => setTimeout(r, cancelAfterMs)); // the scenario: where in the create the cancel lands
            const cancel = await m.cancel({ merchant_operation_id: moid });
            return { moid, cancel, create: await creating };
          }),
        )),
      );
    }
    await sandbox.reset();

    let wonDuringCreate = 0;
    /** Cancelled payments the provider took the money for and called back about. */
    const paidAfterCancel: string[] = [];
    for (const { moid, cancel, create } of outcomes) {
      // A create answered 503 `unavailable` ran past a deadline behind the gateway (200 creates and
      // cancels at once on a loaded machine): no answer, as for the merchant, whose retry would learn it.
      if (create.status !== 200) expect({ moid, create }).toMatchObject({ moid, create: { status: 503, body: { error: { code: "unavailable" } } } });
      expect([200, 404, 503]).toContain(cancel.status);
      // No decision: 404, the create had not reached the service; 503, the cancel could not be made
      // durable within its deadline.
      if (cancel.status !== 200) continue;
      expect(cancel.body.outcome).toBe("cancelled");
      if (create.status === 200) expect(create.body.status === "cancelled" || create.body.status === "pending").toBe(true);
      if (!hasDetails(cancel.body.operation)) {
        // Cancel won while the create was in flight: no details in the create answer, nor later.
        wonDuringCreate++;
        if (create.status === 200) expect({ moid, status: create.body.status, details: hasDetails(create.body) }).toEqual({ moid, status: "cancelled", details: false });
      }
      // Whatever the order, paying it now must never complete it.
      const paid = await sandbox.pay(cancel.body.operation.operation_id, { amount: "10.00" });
      if (paid.status === 200) {
        // Routing took the callback (recorded it and queued its update for operations).
        expect({ moid, callback: paid.body.callback }).toEqual({ moid, callback: { delivered: true, status_code: 200 } });
        paidAfterCancel.push(cancel.body.operation.operation_id);
      } else {
        // 412: the cancel reached the provider first. 404: the cancel won before the create asked the
        // provider at all, which only a payment cancelled during its create (no details) can show.
        const refusals = hasDetails(cancel.body.operation) ? [412] : [404, 412];
        expect({ moid, status: paid.status, allowed: refusals.includes(paid.status) }).toEqual({ moid, status: paid.status, allowed: true });
      }
    }
    // Operations has acted on every such callback: the money is late funds of the cancelled payment.
    const lateFundsFor = async () =>
      new Set(((await admin(stack, "GET", `/admin/api/late-funds?shop_id=${shop.shopId}&limit=500`)).body.late_funds as { operation_id: string }[]).map((l) => l.operation_id));
    const lateFunds = await pollUntil(lateFundsFor, (ids) => paidAfterCancel.every((id) => ids.has(id)), 30_000);
    expect(paidAfterCancel.filter((id) => !lateFunds.has(id))).toEqual([]);
    expect(await consumerCaughtUp(stack, "operations-provider-updates")).toBe(true);
    for (const { moid, cancel } of outcomes) {
      const state = await m.state({ merchant_operation_id: moid });
      if (cancel.status === 200) {
        expect({ moid, status: state.body.status }).toEqual({ moid, status: "cancelled" });
        if (!hasDetails(cancel.body.operation)) expect(hasDetails(state.body)).toBe(false);
      }
    }
    // Both orders actually happened in this run.
    expect(wonDuringCreate).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.cancel.status === 200 && hasDetails(o.cancel.body.operation)).length).toBeGreaterThan(0);
  }, 120_000);
});

describe("malformed create bodies", () => {
  const valid = { merchant_operation_id: "x", client_id: "c", method: "WT_RUB_C2C", amount: "10.00", currency: "RUB" };
  const junk = fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }), fc.object({ maxDepth: 1 }));
  const corruption = fc.oneof(
    fc.constantFrom("merchant_operation_id", "client_id", "method", "amount", "currency").map((field) => (b: Record<string, unknown>) => ({ ...b, [field]: undefined })),
    fc.tuple(fc.constantFrom("merchant_operation_id", "client_id", "method", "amount", "currency", "client_ip", "number", "name", "bankname"), junk.filter((v) => v !== null)).map(
      ([field, value]) => (b: Record<string, unknown>) => ({ ...b, [field]: value }),
    ),
    fc.string().filter((s) => !/^(0|[1-9]\d{0,17})(\.\d{1,2})?$/.test(s) || Number(s) === 0).map((amount) => (b: Record<string, unknown>) => ({ ...b, amount })),
    fc.string().filter((s) => !["RUB", "USDT"].includes(s)).map((currency) => (b: Record<string, unknown>) => ({ ...b, currency })),
    fc.string().filter((s) => !["WT_RUB_C2C", "WT_RUB_PHONE"].includes(s)).map((method) => (b: Record<string, unknown>) => ({ ...b, method })),
  );
  const bodies = fc.oneof(
    { weight: 4, arbitrary: fc.array(corruption, { minLength: 1, maxLength: 3 }).map((cs) => JSON.stringify(cs.reduce((b, c) => c(b), { ...valid, merchant_operation_id: newMoid("fc") } as Record<string, unknown>))) },
    { weight: 1, arbitrary: fc.oneof(fc.string(), fc.json().filter((j) => !j.trim().startsWith("{"))) },
  );

  it("answers every malformed or random body with 400 and creates nothing", async () => {
    const before = await stack.services.operations.db.operation.count();
    await fc.assert(
      fc.asyncProperty(bodies, fc.constantFrom("/v1/payment", "/v1/payment/link", "/v1/payout"), async (body, path) => {
        const res = await m.post(path, body);
        expect({ body, status: res.status, code: res.body?.error?.code }).toEqual({ body, status: 400, code: "validation_error" });
      }),
      { numRuns: 150 },
    );
    expect(await stack.services.operations.db.operation.count()).toBe(before);
  }, 120_000);
});

/**
 * The row a Create leaves when its process dies after claiming the key, older than the deadline
 * plus the sweep's minute of grace (the create deadline is 15 s).
 */
function insertAbandonedCreate(db: pg.Client, o: { id: string; shop: { shopId: string; merchantId: string }; moid: string; type: "payment" | "payout"; amount: string }) {
  return db.query(
    `INSERT INTO operations (id, shop_id, merchant_id, merchant_operation_id, request_hash, type, status, method, currency, expected_amount, client_id, settlement_currency, created_at, merchant_operation_key)
     VALUES ($1, $2, $3, $4, 'hash-of-a-lost-request', $5, 'creating', 'WT_RUB_C2C', 'RUB', $6, 'c', 'RUB', now() - interval '2 minutes', $7)`,
    [o.id, o.shop.shopId, o.shop.merchantId, o.moid, o.type, o.amount, operationKeyHash(o.moid)],
  );
}

describe("a create whose process died mid-flight", () => {
  it("holds its key until the create deadline has long passed, then gives it back", async () => {
    const moid = newMoid("abandoned");
    const abandonedId = randomUUID();
    const db = new pg.Client({ connectionString: stack.databases.operations });
    await db.connect();
    try {
      await insertAbandonedCreate(db, { id: abandonedId, shop, moid, type: "payment", amount: "10" });
      const body = { merchant_operation_id: moid, client_id: "c", method: "WT_RUB_C2C", amount: "10.00", currency: "RUB" };
      expect((await m.payment(body)).status).toBe(412); // the key is still held (another request's hash)

      // The sweep runs every 10 s: within 20 s the key is free and the same request creates anew.
      const created = await pollUntil(() => m.payment(body), (res) => res.status !== 412, 20_000, 500);
      expect(created.status).toBe(200);
      expect(created.body.status).toBe("pending");
      expect(created.body.operation_id).not.toBe(abandonedId);
      expect((await db.query(`SELECT 1 FROM operations WHERE id = $1`, [abandonedId])).rowCount).toBe(0);
    } finally {
      await db.end();
    }
  }, 40_000);

  it("a payout's: its reserve goes back when the row is swept", async () => {
    const payer = await createShopWithKey(stack);
    expect((await admin(stack, "POST", `/admin/api/shops/${payer.shopId}/adjustments`, { currency: "RUB", amount: "500.00", reason: "prefunding" })).status).toBe(201);
    const abandonedId = randomUUID();
    const db = new pg.Client({ connectionString: stack.databases.operations });
    await db.connect();
    try {
      // The process died after the ledger held the reserve and before anything else.
      await insertAbandonedCreate(db, { id: abandonedId, shop: payer, moid: newMoid("abandoned-payout"), type: "payout", amount: "100" });
      const ledger = createClient(LedgerService, createPeerTransport(`http://127.0.0.1:${stack.services.ledger.grpcPort}`));
      await ledger.reserve({ shopId: payer.shopId, operationId: abandonedId, method: "WT_RUB_C2C", amount: "100.00", currency: "RUB", settlementCurrency: "RUB", overdraftLimit: "0" });
      const client = merchantClient(stack, payer.apiKey);
      expect(await client.waitForBalance("RUB", "500.00", 25_000)).toEqual({ currency: "RUB", balance: "500.00", current_minus: "0.00", reserved: "0.00" });
      // The row goes right after the reserve (abandoned-creates.ts), so it may lag the balance by a moment.
      const rows = await pollUntil(async () => (await db.query(`SELECT 1 FROM operations WHERE id = $1`, [abandonedId])).rowCount, (n) => n === 0, 5_000);
      expect(rows).toBe(0);
    } finally {
      await db.end();
    }
  }, 40_000);
});
