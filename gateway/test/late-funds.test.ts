import { createPgDb } from "@pgw/kit/db";
import { enqueueEvent } from "@pgw/kit/events";
import { type Logger } from "@pgw/kit/runtime";
import { create } from "@bufbuild/protobuf";
import { ProviderUpdateSchema } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { memoryLog } from "@pgw/kit/testing";
import { applyProviderUpdate } from "../../services/operations/src/handlers/apply-provider-update";
import type { Peers } from "../../services/operations/src/connectors/peers";
import { providerUpdateEvent } from "../../services/routing/src/events";
import { request } from "../../test/support/http";
import { metricTotal, metricValue } from "../../test/support/metrics";
import { merchantClient, newMoid, sandboxControl } from "../../test/support/merchant";
import { providerCallback } from "../../test/support/provider";
import { pollUntil } from "../../test/support/poll";
import { admin, createShopWithKey, startStack, type Stack } from "../../test/support/stack";

let stack: Stack;
let shop: Awaited<ReturnType<typeof createShopWithKey>>;
let m: ReturnType<typeof merchantClient>;
let sandboxDb: pg.Client;
let operationsDb: pg.Client;
let routingDb: pg.Client;

beforeAll(async () => {
  stack = await startStack();
  shop = await createShopWithKey(stack);
  m = merchantClient(stack, shop.apiKey);
  sandboxDb = new pg.Client({ connectionString: stack.databases["provider-sandbox"] });
  operationsDb = new pg.Client({ connectionString: stack.databases.operations });
  routingDb = new pg.Client({ connectionString: stack.databases.routing });
  await Promise.all([sandboxDb.connect(), operationsDb.connect(), routingDb.connect()]);
}, 120_000);
afterAll(async () => {
  await Promise.all([sandboxDb?.end(), operationsDb?.end(), routingDb?.end()]);
  await stack?.stop();
});

/**
 * What the provider does when it takes the payer's money after our cancel reached it too late (or
 * after it had itself reported the operation declined or expired): a signed `completed` callback.
 * The sandbox refuses to pay an operation it knows ended, so the test sends the callback it would.
 */
const providerReportsMoney = (operationId: string, amount: string) => providerCallback(stack, operationId, { status: "completed", amount });

const rubBalance = async () => (await m.get("/v1/balances")).body.balances.find((b: { currency: string }) => b.currency === "RUB");
const processedUpdates = async () => Number((await operationsDb.query(`SELECT count(*) FROM processed_events WHERE consumer LIKE '%operations-provider-updates'`)).rows[0].count);
const openLateFunds = async () => (await admin(stack, "GET", `/admin/api/late-funds?state=open&shop_id=${shop.shopId}`)).body.late_funds as any[];

async function cancelledPayment(amount: string) {
  const created = await m.payment({ merchant_operation_id: newMoid("late"), client_id: "c", method: "WT_RUB_C2C", amount, currency: "RUB" });
  expect(created.status).toBe(200);
  expect((await m.cancel({ operation_id: created.body.operation_id })).body.outcome).toBe("cancelled");
  return created.body.operation_id as string;
}

describe("late funds: money a provider reports for an operation that already ended", () => {
  it("are recorded once for the admin to return, while the operation and the balance stay as they were", async () => {
    const operationId = await cancelledPayment("100.00");
    const before = await processedUpdates();
    // Counted by the replica that recorded it: every replica's count (one with a single stack).
    const opened = () => metricTotal(stack.replicas.operations.map((o) => o.healthPort), "operations_late_funds_opened_total", { type: "payment" });
    const openedBefore = await opened();
    expect((await providerReportsMoney(operationId, "100.00")).status).toBe(200);

    const [item] = await pollUntil(openLateFunds, (items) => items.length > 0);
    expect(item).toMatchObject({
      operation_id: operationId,
      shop_id: shop.shopId,
      operation_type: "payment",
      operation_status: "cancelled",
      amount: "100.00",
      currency: "RUB",
      resolved_at: null,
      resolved_by: null,
      note: null,
    });
    expect(new Date(item.reported_at).getTime()).toBeGreaterThan(Date.now() - 60_000);

    // The provider repeats itself under a new callback id: still one record.
    expect((await providerReportsMoney(operationId, "100.00")).status).toBe(200);
    expect(await pollUntil(processedUpdates, (n) => n >= before + 2)).toBe(before + 2);
    expect((await openLateFunds()).map((i) => i.operation_id)).toEqual([operationId]);
    // Counted once, as recorded; the open ones are counted at each scrape.
    expect(await opened()).toBe(openedBefore + 1);
    expect(await metricValue(stack.services.operations.healthPort, "operations_late_funds_open")).toBeGreaterThanOrEqual(1);

    const state = await m.state({ operation_id: operationId });
    expect(state.body).toMatchObject({ status: "cancelled", actual_amount: "0.00" });
    expect(await rubBalance()).toMatchObject({ balance: "0.00", reserved: "0.00" });
  });

  it("are recorded when the payer pays at the provider after the cancel, before the provider heard of it: its callback is accepted and the payment never completes", async () => {
    const created = await m.payment({ merchant_operation_id: newMoid("late-paid"), client_id: "c", method: "WT_RUB_C2C", amount: "40.00", currency: "RUB" });
    const operationId = created.body.operation_id as string;
    const before = await rubBalance();
    // Routing cancels the placement at the provider once it reads the cancel. Holding the allocation's
    // row keeps it from doing so until the payer's payment is in at the provider (and keeps the
    // provider's callback waiting too: it is answered once the row is let go).
    const providerStatus = async () => (await sandboxDb.query(`SELECT status FROM sandbox_operations WHERE operation_id = $1`, [operationId])).rows[0].status;
    let paying: ReturnType<ReturnType<typeof sandboxControl>["pay"]>;
    await routingDb.query("BEGIN");
    try {
      await routingDb.query(`SELECT 1 FROM allocations WHERE operation_id = $1 FOR UPDATE`, [operationId]);
      expect((await m.cancel({ operation_id: operationId })).body.outcome).toBe("cancelled");
      paying = sandboxControl(stack).pay(operationId, { amount: "40.00" });
      expect(await pollUntil(providerStatus, (status) => status !== "created")).toBe("paid");
    } finally {
      await routingDb.query("COMMIT");
    }

    // The provider's completed callback reached routing, which accepted and recorded it.
    const paid = await paying;
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ status: "paid", callback: { delivered: true, status_code: 200 } });
    expect((await routingDb.query(`SELECT status FROM provider_callbacks WHERE operation_id = $1`, [operationId])).rows).toEqual([{ status: "completed" }]);
    // Operations applied it as late funds, not as a completion.
    const items = await pollUntil(openLateFunds, (list) => list.some((i) => i.operation_id === operationId));
    expect(items.find((i) => i.operation_id === operationId)).toMatchObject({ operation_status: "cancelled", amount: "40.00", currency: "RUB" });
    expect((await m.state({ operation_id: operationId })).body).toMatchObject({ status: "cancelled", actual_amount: "0.00" });
    expect(await rubBalance()).toEqual(before);
  });

  it("are also recorded for a payment the provider declined before reporting its money", async () => {
    const created = await m.payment({ merchant_operation_id: newMoid("late-declined"), client_id: "c", method: "WT_RUB_C2C", amount: "7.50", currency: "RUB" });
    expect((await sandboxControl(stack).decline(created.body.operation_id)).status).toBe(200);
    await m.waitForStatus(created.body.operation_id, "declined");
    expect((await providerReportsMoney(created.body.operation_id, "7.50")).status).toBe(200);
    const items = await pollUntil(openLateFunds, (list) => list.some((i) => i.operation_id === created.body.operation_id));
    expect(items.find((i) => i.operation_id === created.body.operation_id)).toMatchObject({ operation_status: "declined", amount: "7.50" });
  });

  it("are recorded when a payment awaiting its receipt is cancelled after the provider reported its money (kept for the review until then)", async () => {
    const sandbox = sandboxControl(stack);
    await sandbox.scenario({ method: "WT_RUB_C2C", accept: "accept", requires_receipt: true });
    try {
      const created = await m.payment({ merchant_operation_id: newMoid("late-awaiting"), client_id: "c", method: "WT_RUB_C2C", amount: "700.00", currency: "RUB" });
      expect(created.body.status).toBe("awaiting_confirmation");
      const operationId = created.body.operation_id as string;
      expect((await sandbox.pay(operationId, { amount: "700.00" })).status).toBe(200);
      const reported = async () => (await operationsDb.query(`SELECT provider_reported_amount::text AS amount FROM operations WHERE id = $1`, [operationId])).rows[0].amount;
      expect(await pollUntil(reported, (amount) => amount !== null)).toBe("700.000000");
      expect((await m.state({ operation_id: operationId })).body).toMatchObject({ status: "awaiting_confirmation", actual_amount: "0.00" });
      expect((await openLateFunds()).some((i) => i.operation_id === operationId)).toBe(false);

      expect((await m.cancel({ operation_id: operationId })).body.outcome).toBe("cancelled");
      const items = await openLateFunds();
      expect(items.find((i) => i.operation_id === operationId)).toMatchObject({ operation_status: "cancelled", amount: "700.00", currency: "RUB" });
    } finally {
      await sandbox.reset();
    }
  });

  it("are recorded when the provider took the money before a cancel and its callback was lost: routing asks after cancelling", async () => {
    const created = await m.payment({ merchant_operation_id: newMoid("late-lost"), client_id: "c", method: "WT_RUB_C2C", amount: "55.00", currency: "RUB" });
    const operationId = created.body.operation_id as string;
    // The payer paid and the provider's callback never arrived (routing was down, the provider gave up).
    await sandboxDb.query(`UPDATE sandbox_operations SET status = 'paid', paid_amount = 55.00 WHERE operation_id = $1`, [operationId]);
    expect((await m.cancel({ operation_id: operationId })).body.outcome).toBe("cancelled");
    const items = await pollUntil(openLateFunds, (list) => list.some((i) => i.operation_id === operationId));
    expect(items.find((i) => i.operation_id === operationId)).toMatchObject({ operation_status: "cancelled", amount: "55.00" });
    expect((await m.state({ operation_id: operationId })).body).toMatchObject({ status: "cancelled", actual_amount: "0.00" });
  });

  it("are resolved once, with who did what (the operator signed in, whatever X-Admin-Actor says); a second resolve is 412 and bad requests change nothing", async () => {
    const operationId = await cancelledPayment("12.34");
    await providerReportsMoney(operationId, "12.34");
    const item = (await pollUntil(openLateFunds, (items) => items.some((i) => i.operation_id === operationId))).find((i) => i.operation_id === operationId);
    const tokenOf = async (name: string) => (await admin(stack, "POST", "/admin/api/operators", { name })).body.token as string;
    const operators = { alice: await tokenOf("alice"), bob: await tokenOf("bob") };
    const resolve = (id: string, body: unknown, operator: keyof typeof operators = "alice") =>
      request(`${stack.adminUrl}/admin/api/late-funds/${id}/resolve`, {
        method: "POST",
        headers: { authorization: `Bearer ${operators[operator]}`, "content-type": "application/json", "x-admin-actor": "mallory" },
        body: JSON.stringify(body),
      });

    const noNote = await resolve(item.id, { note: "  " });
    expect(noNote.status).toBe(400);
    expect(noNote.body.error.details).toEqual([expect.objectContaining({ field: "note" })]);
    expect((await resolve(randomUUID(), { note: "returned" })).status).toBe(404);
    expect((await resolve("not-a-uuid", { note: "returned" })).status).toBe(404);
    expect((await admin(stack, "GET", "/admin/api/late-funds?state=lost")).status).toBe(400);
    expect((await openLateFunds()).some((i) => i.id === item.id)).toBe(true);

    const done = await resolve(item.id, { note: "returned to the payer, ticket 42" });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ id: item.id, resolved_by: "alice", note: "returned to the payer, ticket 42" });
    expect(new Date(done.body.resolved_at).getTime()).toBeGreaterThan(Date.now() - 60_000);

    const again = await resolve(item.id, { note: "credited to the shop" }, "bob");
    expect(again.status).toBe(412);
    expect(again.body.error.code).toBe("invalid_state");
    expect((await openLateFunds()).some((i) => i.id === item.id)).toBe(false);
    const resolved = (await admin(stack, "GET", `/admin/api/late-funds?state=resolved&shop_id=${shop.shopId}`)).body.late_funds;
    expect(resolved.find((i: { id: string }) => i.id === item.id)).toMatchObject({ resolved_by: "alice", note: "returned to the payer, ticket 42" });
  });
});

describe("a provider's updates that reach operations out of order", () => {
  it("are applied in routing's order: money reported after an expiry is late funds, even when its update arrives first", async () => {
    const created = await m.payment({ merchant_operation_id: newMoid("late-order"), client_id: "c", method: "WT_RUB_C2C", amount: "25.00", currency: "RUB" });
    const operationId = created.body.operation_id as string;
    const before = await rubBalance();
    const deferred = () => metricTotal(stack.replicas.operations.map((o) => o.healthPort), "events_consumed_total", { consumer: "operations-provider-updates", outcome: "deferred" });
    const deferredBefore = await deferred();
    /** An update as routing writes it, numbered as routing applied it. */
    const publish = async (facts: { status: "completed" | "expired"; actualAmount?: string; sequence: number }) => {
      const event = providerUpdateEvent({ operationId, occurredAt: new Date().toISOString(), ...facts });
      await stack.services.routing.sql.$transaction((tx) => enqueueEvent(tx, event.subject, event.payload, event.id));
    };
    // Routing applied the expiry (1), then the money after all (2); the money's update is on the stream first.
    await publish({ status: "completed", actualAmount: "25.00", sequence: 2 });
    expect(await pollUntil(deferred, (n) => n > deferredBefore)).toBeGreaterThan(deferredBefore);
    expect((await m.state({ operation_id: operationId })).body).toMatchObject({ status: "pending", actual_amount: "0.00" });
    await publish({ status: "expired", sequence: 1 });

    const items = await pollUntil(openLateFunds, (list) => list.some((i) => i.operation_id === operationId));
    expect(items.find((i) => i.operation_id === operationId)).toMatchObject({ operation_status: "expired", amount: "25.00", currency: "RUB" });
    expect((await m.state({ operation_id: operationId })).body).toMatchObject({ status: "expired", actual_amount: "0.00" });
    expect((await operationsDb.query(`SELECT provider_updates_applied FROM operations WHERE id = $1`, [operationId])).rows).toEqual([{ provider_updates_applied: 2 }]);
    expect(await rubBalance()).toEqual(before);
  });
});

describe("a provider report that contradicts a completed booking", () => {
  it("leaves the booking and raises provider_amount_mismatch for someone to reconcile", async () => {
    const created = await m.payment({ merchant_operation_id: newMoid("mismatch"), client_id: "c", method: "WT_RUB_C2C", amount: "1500.00", currency: "RUB" });
    const operationId = created.body.operation_id as string;
    await sandboxControl(stack).pay(operationId, { amount: "1500.00" });
    await pollUntil(async () => (await m.state({ operation_id: operationId })).body.status, (s) => s === "completed");

    // The provider's later report, applied as operations' consumer applies it.
    const db = createPgDb(stack.databases.operations, 1);
    const log = memoryLog();
    try {
      // The provider's second update of the operation (its first completed it).
      const update = create(ProviderUpdateSchema, { operationId, status: "completed", actualAmount: "600.00", sequence: 2 });
      await db.$transaction((tx) => applyProviderUpdate(tx, update, new Date(), {} as Peers, log as unknown as Logger));
    } finally {
      await db.end();
    }
    expect(log.lines).toContainEqual(expect.objectContaining({ level: "error", obj: expect.objectContaining({ alert: "provider_amount_mismatch", booked: "1500.00", reported: "600.00" }) }));
    expect((await m.state({ operation_id: operationId })).body).toMatchObject({ status: "completed", actual_amount: "1500.00" });
  });
});
