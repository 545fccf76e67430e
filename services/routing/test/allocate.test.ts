import { fromConnectError } from "@pgw/kit/rpc";
import { randomUUID } from "node:crypto";
import { createStore } from "../../provider-sandbox/src/store";
import { metricValue } from "../../../test/support/metrics";
import { allocateRequest, codeOf, startHarness, type Harness } from "./harness";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ providerTimeoutMs: 800 });
});
afterAll(async () => {
  await h?.stop();
});
beforeEach(async () => {
  await h.resetScenarios();
});

/** Code of the provider an operation was placed at (routing's own record). */
async function placedAt(operationId: string) {
  const row = await h.routing.db.allocation.findUnique({ where: { operationId }, include: { provider: true } });
  return row?.provider?.code;
}

const sandboxOp = (sb: Harness["sandboxA"], operationId: string) => createStore(sb.db).byOperationId(operationId);

describe("Allocate", () => {
  it.each([
    ["WT_RUB_C2C", /^\d{16,19}$/],
    ["WT_RUB_PHONE", /^\+?\d{11,}$/],
  ])("places a %s payment at the first provider and answers its requisites", async (method, numberShape) => {
    const req = allocateRequest({ method });
    const res = await h.client.allocate(req);
    expect(res.allocationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.requiresReceipt).toBe(false);
    expect(res.fx).toBeUndefined();
    expect(res.expiresAt).toBeUndefined();
    const op = await sandboxOp(h.sandboxA, req.operationId);
    expect(op?.kind).toBe("payin");
    const given = op!.requisites;
    expect(res.requisites).toEqual(expect.objectContaining({ number: given.number, name: given.name, bankname: given.bankname }));
    expect(res.requisites?.number).toMatch(numberShape);
    expect(await placedAt(req.operationId)).toBe("sandbox");
  });

  it("answers a payout's destination as sent", async () => {
    const destination = { number: "79001234567", name: "Ivan Petrov", bankname: "sberbank" };
    const req = allocateRequest({ type: "payout", method: "WT_RUB_PHONE", destination });
    const res = await h.client.allocate(req);
    expect(res.requisites).toEqual(expect.objectContaining(destination));
    expect((await sandboxOp(h.sandboxA, req.operationId))?.kind).toBe("payout");
  });

  it("quotes fx on an auto-conversion route and carries the provider's receipt requirement and expiry", async () => {
    await h.control(h.sandboxA, "PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "accept", requires_receipt: true, expires_in_s: 900 });
    const res = await h.client.allocate(allocateRequest({ settlementCurrency: "USDT" }));
    expect(res.fx).toEqual(expect.objectContaining({ source: "sandbox-fx", rate: "0.0108401084", targetCurrency: "USDT" }));
    expect(res.requiresReceipt).toBe(true);
    const expires = Date.parse(res.expiresAt ?? "");
    expect(expires - Date.now()).toBeGreaterThan(800_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(900_000);
  });

  it("is idempotent by operation_id: the stored allocation again, without asking a provider", async () => {
    const req = allocateRequest();
    const first = await h.client.allocate(req);
    await h.control(h.sandboxA, "PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "reject" });
    await h.control(h.sandboxB, "PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "reject" });
    const again = await h.client.allocate(req);
    expect(again).toEqual(first);
  });

  it("concurrent Allocates of one operation end on one allocation, still live at the provider", async () => {
    await h.control(h.sandboxA, "PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "accept", accept_delay_ms: 200 });
    const req = allocateRequest();
    const answers = await Promise.all([h.client.allocate(req), h.client.allocate(req), h.client.allocate(req)]);
    expect(new Set(answers.map((a) => a.allocationId)).size).toBe(1);
    expect((await sandboxOp(h.sandboxA, req.operationId))?.status).toBe("created");
  });

  it("leaves a placement alone when its provider reference is already another operation's", async () => {
    const req = allocateRequest();
    const first = await h.client.allocate(req);
    // Another operation now holds that placement's reference, and this one has no allocation: the
    // sandbox, deduplicating by operation_id, answers the same reference again.
    const other = randomUUID();
    await h.routing.db.allocation.update({ where: { operationId: req.operationId }, data: { operationId: other } });
    expect(await codeOf(h.client.allocate(req))).toBe("internal");
    expect((await sandboxOp(h.sandboxA, req.operationId))?.status).toBe("created");
    expect((await h.routing.db.allocation.findUnique({ where: { operationId: other } }))?.id).toBe(first.allocationId);
    expect(await h.routing.db.allocation.findUnique({ where: { operationId: req.operationId } })).toBeNull();
  });

  it("moves on to the next provider when the first refuses", async () => {
    await h.control(h.sandboxA, "PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "reject" });
    const req = allocateRequest();
    await h.client.allocate(req);
    expect(await placedAt(req.operationId)).toBe("sandbox-b");
    expect(await sandboxOp(h.sandboxA, req.operationId)).toBeNull();
  });

  it("moves on to the next provider when the first times out, within the budget", async () => {
    await h.control(h.sandboxA, "PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "timeout" });
    const payins = (outcome: string) => metricValue(h.routing.healthPort, "routing_provider_requests_total", { call: "createPayin", outcome });
    const [timedOut, ok] = [await payins("timeout"), await payins("ok")];
    const req = allocateRequest({ budgetMs: 3000 });
    const started = Date.now();
    await h.client.allocate(req);
    const ms = Date.now() - started;
    expect(await placedAt(req.operationId)).toBe("sandbox-b");
    expect(ms).toBeGreaterThanOrEqual(750); // waited out the first provider's 800 ms timeout
    expect(ms).toBeLessThan(2500);
    // Both calls measured: the first provider's as a timeout, the second's as answered.
    expect([await payins("timeout"), await payins("ok")]).toEqual([timedOut + 1, ok + 1]);
  });

  it("waits for the last candidate as long as the budget allows, past its provider's own timeout", async () => {
    await h.control(h.sandboxA, "PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "reject" });
    await h.control(h.sandboxB, "PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "accept", accept_delay_ms: 1500 }); // timeout 800 ms
    const req = allocateRequest({ budgetMs: 3000 });
    await h.client.allocate(req);
    expect(await placedAt(req.operationId)).toBe("sandbox-b");
  });

  it("answers no_provider_available when every provider refuses", async () => {
    await h.control(h.sandboxA, "PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "reject" });
    await h.control(h.sandboxB, "PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "reject" });
    const req = allocateRequest();
    expect(await codeOf(h.client.allocate(req))).toBe("no_provider_available");
    expect(await h.routing.db.allocation.findUnique({ where: { operationId: req.operationId } })).toBeNull();
  });

  it("gives up when the budget is spent, not later", async () => {
    await h.control(h.sandboxA, "PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "timeout" });
    await h.control(h.sandboxB, "PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "timeout" });
    const budgetMs = 1000; // 800 ms at A, then the 200 ms left at B (ignoring the budget would take 1600 ms)
    const started = Date.now();
    expect(await codeOf(h.client.allocate(allocateRequest({ budgetMs })))).toBe("no_provider_available");
    const ms = Date.now() - started;
    expect(ms).toBeGreaterThanOrEqual(budgetMs - 100);
    expect(ms).toBeLessThan(budgetMs + 400);
  });

  it.each([
    ["an amount above every route's limit", { amount: "1000000.01" }, { field: "amount", issue: "must be between 1.00 and 1000000.00 for this method and currency" }],
    ["a method no route serves", { method: "WT_RUB_SBP" }, { field: "method", issue: "is not available for payments" }],
  ])("refuses %s as a validation_error naming the field, asking no provider and allocating nothing", async (_what, over, detail) => {
    const req = allocateRequest(over);
    const refused = await h.client.allocate(req).then(
      () => undefined,
      (err: unknown) => fromConnectError(err),
    );
    expect({ code: refused?.code, details: refused?.details }).toEqual({ code: "validation_error", details: [detail] });
    expect(await sandboxOp(h.sandboxA, req.operationId)).toBeNull();
    expect(await sandboxOp(h.sandboxB, req.operationId)).toBeNull();
    expect(await h.routing.db.allocation.findUnique({ where: { operationId: req.operationId } })).toBeNull();
  });

  it.each([
    ["operation_id", { operationId: "nope" }],
    ["type", { type: "refund" }],
    ["amount", { amount: "1.001" }],
    ["currency", { currency: "EUR" }],
    ["payout destination", { type: "payout" }],
  ])("refuses a bad %s", async (_what, over) => {
    expect(await codeOf(h.client.allocate(allocateRequest(over)))).toBe("validation_error");
  });
});

describe("Release", () => {
  it("cancels an active allocation at its provider; a later Allocate answers invalid_state; repeats are harmless", async () => {
    const req = allocateRequest();
    await h.client.allocate(req);
    expect(await h.client.release({ operationId: req.operationId, reason: "merchant cancel" })).toEqual(expect.objectContaining({ released: true }));
    expect((await sandboxOp(h.sandboxA, req.operationId))?.status).toBe("cancelled");
    expect(await codeOf(h.client.allocate(req))).toBe("invalid_state");
    expect((await h.client.release({ operationId: req.operationId, reason: "" })).released).toBe(true);
    const row = await h.routing.db.allocation.findUnique({ where: { operationId: req.operationId } });
    expect(row).toEqual(expect.objectContaining({ status: "released", releaseReason: "merchant cancel" }));
  });

  it("before any allocation leaves a tombstone: the Allocate that follows places nothing", async () => {
    const req = allocateRequest();
    expect((await h.client.release({ operationId: req.operationId, reason: "cancel" })).released).toBe(true);
    expect(await codeOf(h.client.allocate(req))).toBe("invalid_state");
    expect(await sandboxOp(h.sandboxA, req.operationId)).toBeNull();
    expect(await sandboxOp(h.sandboxB, req.operationId)).toBeNull();
  });

  it("during an in-flight Allocate: the Allocate cancels what it just placed and answers invalid_state", async () => {
    await h.control(h.sandboxA, "PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "accept", accept_delay_ms: 500 });
    const req = allocateRequest();
    const created = h.sentTo(h.sandboxA, "POST", "/api/v1/payins");
    const allocating = codeOf(h.client.allocate(req));
    await created; // the create is held at the provider now, for 500 ms
    expect(await sandboxOp(h.sandboxA, req.operationId)).toBeNull();
    expect((await h.client.release({ operationId: req.operationId, reason: "cancel" })).released).toBe(true);
    expect(await allocating).toBe("invalid_state");
    const op = await sandboxOp(h.sandboxA, req.operationId);
    expect(op?.status).toBe("cancelled"); // the provider did create it, and it was undone
    const allocation = () => h.routing.db.allocation.findUnique({ where: { operationId: req.operationId } });
    // The tombstone names what was placed, so a callback about it is still recognised.
    expect(await allocation()).toMatchObject({ status: "released", providerReference: op!.reference });
    // The payer paid before the provider saw the cancel: the money is reported on (operations
    // records it as late funds), not refused as an unknown reference.
    const paid = JSON.stringify({ callback_id: randomUUID(), reference: op!.reference, operation_id: req.operationId, status: "completed", amount: "100.00", occurred_at: new Date().toISOString() });
    expect(await h.postCallback("sandbox", paid)).toEqual({ status: 200, json: { status: "accepted" } });
    expect((await allocation())?.status).toBe("completed");
  });

  it("does not release a finished allocation", async () => {
    const req = allocateRequest();
    await h.client.allocate(req);
    await h.routing.db.allocation.update({ where: { operationId: req.operationId }, data: { status: "completed" } });
    expect((await h.client.release({ operationId: req.operationId, reason: "late" })).released).toBe(false);
    expect((await sandboxOp(h.sandboxA, req.operationId))?.status).toBe("created");
  });
});

describe("CheckRoutable", () => {
  const ask = (over: Record<string, string> = {}) => ({ type: "payout", method: "WT_RUB_C2C", amount: "1500.00", currency: "RUB", settlementCurrency: "RUB", ...over });
  const refusalOf = (call: Promise<unknown>) =>
    call.then(
      () => null,
      (err: unknown) => {
        const app = fromConnectError(err);
        return { code: app.code, details: app.details };
      },
    );

  it("answers an operation some route could carry, and refuses one none could as Allocate does, allocating nothing", async () => {
    const allocationsBefore = await h.routing.db.allocation.count();
    expect(await refusalOf(h.client.checkRoutable(ask()))).toBeNull();
    expect(await refusalOf(h.client.checkRoutable(ask({ amount: "1000000.01" })))).toEqual({
      code: "validation_error",
      details: [{ field: "amount", issue: "must be between 1.00 and 1000000.00 for this method and currency" }],
    });
    expect(await refusalOf(h.client.checkRoutable(ask({ method: "WT_RUB_SBP" })))).toEqual({ code: "validation_error", details: [{ field: "method", issue: "is not available for payouts" }] });
    expect(await refusalOf(h.client.checkRoutable(ask({ type: "refund" })))).toEqual({ code: "validation_error", details: [{ field: "type", issue: "must be payment or payout" }] });
    expect(await h.routing.db.allocation.count()).toBe(allocationsBefore);
  });
});

describe("QuoteFx and ListRoutes", () => {
  it("quotes the seeded rates and refuses a pair without one as a validation_error naming currency", async () => {
    expect((await h.client.quoteFx({ currency: "USDT", settlementCurrency: "RUB" })).fx).toEqual(expect.objectContaining({ source: "sandbox-fx", rate: "91.85", targetCurrency: "RUB" }));
    const refused = await h.client.quoteFx({ currency: "RUB", settlementCurrency: "RUB" }).then(
      () => undefined,
      (err: unknown) => fromConnectError(err),
    );
    expect({ code: refused?.code, fields: refused?.details.map((d) => d.field) }).toEqual({ code: "validation_error", fields: ["currency"] });
    expect(await codeOf(h.client.quoteFx({ currency: "RUB", settlementCurrency: "EUR" }))).toBe("validation_error");
  });

  it("lists the seeded routes and the test provider's", async () => {
    const { routes } = await h.client.listRoutes({});
    expect(routes).toHaveLength(32);
    const seeded = routes.filter((r) => r.priority === 100);
    expect(seeded).toHaveLength(16);
    expect(seeded.find((r) => r.method === "WT_RUB_PHONE" && r.currency === "RUB" && r.settlementCurrency === "USDT")).toEqual(
      expect.objectContaining({ autoConversion: true, minAmount: "1.00", maxAmount: "1000000.00", requiresReceipt: false, enabled: true }),
    );
  });
});
