import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { OperationStatusChangedSchema, ProviderUpdateSchema, type ProviderUpdate } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { statusChangedSubject } from "@pgw/proto/subjects";
import { loadDataKeys } from "@pgw/kit/db";
import { scopedSubject } from "@pgw/kit/events";
import type { Subscription } from "nats";
import { randomUUID } from "node:crypto";
import { createStore } from "../../provider-sandbox/src/store";
import { SANDBOX_B_SECRET, SANDBOX_SECRET, startHarness, waitFor, type Harness } from "./harness";

let h: Harness;
let sub: Subscription;
/** ProviderUpdate events seen on the bus, by operation id. */
const updates = new Map<string, ProviderUpdate[]>();

beforeAll(async () => {
  h = await startHarness();
  sub = h.nc.subscribe(scopedSubject(h.nc, "pgw.routing.provider_update"));
  void (async () => {
    for await (const m of sub) {
      const u = fromBinary(ProviderUpdateSchema, m.data);
      updates.set(u.operationId, [...(updates.get(u.operationId) ?? []), u]);
    }
  })();
  await h.nc.flush();
});
afterAll(async () => {
  sub?.unsubscribe();
  await h?.stop();
});
beforeEach(async () => {
  await h.resetScenarios();
});

const eventsOf = (operationId: string) => updates.get(operationId) ?? [];
/** The operation's recorded callbacks, their bodies (stored sealed under local mode's data key) opened. */
async function callbackRows(operationId: string) {
  const rows = await h.routing.db.providerCallback.findMany({ where: { operationId } });
  const keys = loadDataKeys({ LOCAL_MODE: "true" });
  return rows.map((row) => ({ ...row, body: keys.open(row.body) }));
}
const allocationOf = (operationId: string) => h.routing.db.allocation.findUnique({ where: { operationId } });

describe("provider callbacks", () => {
  it("a paid pay-in becomes one ProviderUpdate on JetStream with the actual amount", async () => {
    const operationId = await h.allocated();
    const paid = await h.control(h.sandboxA, "POST", `/control/operations/${operationId}/pay`, { amount: "95.50" });
    expect(paid.callback).toEqual(expect.objectContaining({ delivered: true, status_code: 200 }));
    const [update] = await waitFor(async () => eventsOf(operationId).length > 0 && eventsOf(operationId), 5000, "provider update");
    expect(update).toEqual(expect.objectContaining({ operationId, status: "completed", actualAmount: "95.50" }));
    expect(update.eventId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(update.occurredAt)).not.toBeNaN();
    expect((await allocationOf(operationId))?.status).toBe("completed");
  });

  it("a completion's update carries the provider's evidence legs, as GetEvidence answers them", async () => {
    const operationId = await h.allocated({ amount: "1500.00" });
    await h.control(h.sandboxA, "POST", `/control/operations/${operationId}/pay`, { amount: "1500.00", legs: ["1200.00", "300.00"] });
    const [update] = await waitFor(async () => eventsOf(operationId).length > 0 && eventsOf(operationId), 5000, "provider update");
    const asked = await h.client.getEvidence({ operationId });
    expect(update.evidence?.legs).toEqual(asked.legs);
    expect(update.evidence!.legs.map((l) => [l.amount, l.items.map((i) => i.amount)])).toEqual([
      ["1200.00", ["600.00", "600.00"]],
      ["300.00", ["300.00"]],
    ]);
  });

  it.each(["late", "unavailable"])("a completion whose evidence the provider cannot give at once (%s) goes out without legs, unknown", async (evidence) => {
    await h.control(h.sandboxA, "PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "accept", evidence });
    const operationId = await h.allocated();
    const paid = await h.control(h.sandboxA, "POST", `/control/operations/${operationId}/pay`, { amount: "100.00" });
    expect(paid.callback).toEqual(expect.objectContaining({ delivered: true, status_code: 200 }));
    const [update] = await waitFor(async () => eventsOf(operationId).length > 0 && eventsOf(operationId), 5000, "provider update");
    expect(update).toEqual(expect.objectContaining({ status: "completed", actualAmount: "100.00" }));
    expect(update.evidence).toBeUndefined();
  });

  it.each([
    ["decline", "declined"],
    ["expire", "expired"],
  ])("%s at the provider becomes a %s update without an amount", async (action, status) => {
    const operationId = await h.allocated({ type: "payout", destination: { number: "4111111111111111", name: "A B" } });
    await h.control(h.sandboxA, "POST", `/control/operations/${operationId}/${action}`);
    const [update] = await waitFor(async () => eventsOf(operationId).length > 0 && eventsOf(operationId), 5000, "provider update");
    expect(update.status).toBe(status);
    expect(update.actualAmount).toBeUndefined();
    expect(update.evidence).toBeUndefined();
    expect((await allocationOf(operationId))?.status).toBe(status);
  });

  it("numbers an operation's updates in the order routing applied them: an expiry, then money after all", async () => {
    const operationId = await h.allocated();
    await h.control(h.sandboxA, "POST", `/control/operations/${operationId}/expire`);
    await waitFor(async () => eventsOf(operationId).length > 0, 5000, "the expiry's update");
    const { providerReference } = (await allocationOf(operationId))!;
    const paid = JSON.stringify({ callback_id: randomUUID(), reference: providerReference, operation_id: operationId, status: "completed", amount: "100.00", occurred_at: new Date().toISOString() });
    expect(await h.postCallback("sandbox", paid)).toEqual({ status: 200, json: { status: "accepted" } });
    await waitFor(async () => eventsOf(operationId).length > 1, 5000, "the completion's update");
    expect(eventsOf(operationId).map((u) => [u.status, u.sequence])).toEqual([
      ["expired", 1],
      ["completed", 2],
    ]);
    // The allocation keeps the status it ended with; the money is for operations to take as late funds.
    expect(await allocationOf(operationId)).toMatchObject({ status: "expired", providerUpdates: 2 });
  });

  it("a replayed callback is acknowledged and publishes nothing more", async () => {
    const operationId = await h.allocated();
    await h.control(h.sandboxA, "POST", `/control/operations/${operationId}/pay`, { amount: "100.00" });
    await waitFor(async () => eventsOf(operationId).length > 0, 5000, "provider update");
    const [row] = await callbackRows(operationId);
    const replay = await h.postCallback("sandbox", row.body);
    expect(replay).toEqual({ status: 200, json: { status: "duplicate" } });
    // An outbox row the replay wrote would reach the relay at its commit, before a later callback's:
    // once that later callback's update is on the bus, the replay's would be there too.
    const later = await h.allocated();
    await h.control(h.sandboxA, "POST", `/control/operations/${later}/pay`, { amount: "100.00" });
    await waitFor(async () => eventsOf(later).length > 0, 5000, "the later callback's update");
    expect(eventsOf(operationId)).toHaveLength(1);
    expect(await callbackRows(operationId)).toHaveLength(1);
    expect(await h.routing.db.outboxEvent.count()).toBe(await h.routing.db.providerCallback.count());
  });

  it("refuses a bad signature (401), garbage (400), an unknown provider or reference (404), a huge body (413)", async () => {
    const operationId = await h.allocated();
    const ref = (await allocationOf(operationId))!.providerReference!;
    const body = JSON.stringify({ callback_id: randomUUID(), reference: ref, operation_id: operationId, status: "completed", amount: "1.00", occurred_at: new Date().toISOString() });

    expect((await h.postCallback("sandbox", body, { secret: "not-the-secret" })).status).toBe(401);
    expect((await h.postCallback("sandbox", body, { signature: "" })).status).toBe(401);
    expect((await h.postCallback("sandbox", "{not json")).status).toBe(400);
    expect((await h.postCallback("sandbox", JSON.stringify({ reference: ref }))).status).toBe(400);
    expect((await h.postCallback("nobody", body)).status).toBe(404);
    expect((await h.postCallback("sandbox", body.replace(ref, "sbx_unknown"))).status).toBe(404);
    expect((await h.postCallback("sandbox", JSON.stringify({ pad: "x".repeat(70 * 1024) }))).status).toBe(413);
    expect((await h.postCallback("%E0", body)).status).toBe(404); // not valid percent-encoding: no 500
    // Signed, but never applicable: a completion capturing nothing at 2 places, a NUL in a text field.
    for (const amount of ["0.00", "0.004"]) expect((await h.postCallback("sandbox", body.replace('"amount":"1.00"', `"amount":"${amount}"`))).status).toBe(400);
    expect((await h.postCallback("sandbox", body.replace(/"callback_id":"[^"]+"/, '"callback_id":"a\\u0000b"'))).status).toBe(400);
    expect((await allocationOf(operationId))?.status).toBe("active");
    expect(await callbackRows(operationId)).toHaveLength(0);

    // The same body, signed right, goes through: the refusals above were about what they said.
    expect((await h.postCallback("sandbox", body)).json).toEqual({ status: "accepted" });
    await waitFor(async () => eventsOf(operationId).length === 1, 5000, "provider update");
  });

  it("a callback from the second provider is verified with that provider's secret", async () => {
    await h.control(h.sandboxA, "PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "reject" });
    const operationId = await h.allocated();
    const allocation = await h.routing.db.allocation.findUnique({ where: { operationId }, include: { provider: true } });
    expect(allocation?.provider?.code).toBe("sandbox-b");
    const paid = await h.control(h.sandboxB, "POST", `/control/operations/${operationId}/pay`, { amount: "100.00" });
    expect(paid.callback).toEqual(expect.objectContaining({ delivered: true }));
    await waitFor(async () => eventsOf(operationId).length === 1, 5000, "provider update");
    // Sandbox A's secret is no good for provider sandbox-b.
    const [row] = await callbackRows(operationId);
    const forged = row.body.replace(/"callback_id":"[^"]+"/, `"callback_id":"${randomUUID()}"`);
    expect((await h.postCallback("sandbox-b", forged, { secret: SANDBOX_SECRET })).status).toBe(401);
    expect((await h.postCallback("sandbox-b", forged, { secret: SANDBOX_B_SECRET })).status).toBe(200);
  });
});

describe("operation status events", () => {
  it("a cancelled operation has its allocation released and cancelled at the provider", async () => {
    const operationId = await h.allocated();
    const other = await h.allocated();
    const publish = (id: string, status: string) => {
      const eventId = randomUUID();
      const event = create(OperationStatusChangedSchema, { eventId, operationId: id, previousStatus: "pending", status, occurredAt: new Date().toISOString() });
      return h.nc.jetstream().publish(scopedSubject(h.nc, statusChangedSubject(event.status)), toBinary(OperationStatusChangedSchema, event), { msgID: eventId });
    };
    await publish(other, "completed");
    await publish(operationId, "cancelled");
    const op = await waitFor(async () => {
      const o = await createStore(h.sandboxA.db).byOperationId(operationId);
      return o?.status === "cancelled" && o;
    }, 5000, "cancel at the provider");
    expect(op.status).toBe("cancelled");
    expect((await allocationOf(operationId))?.status).toBe("released");
    expect((await allocationOf(other))?.status).toBe("active");
    expect((await createStore(h.sandboxA.db).byOperationId(other))?.status).toBe("created");
  });

  it("a cancellation that arrives before any allocation leaves a tombstone", async () => {
    const operationId = randomUUID();
    const eventId = randomUUID();
    const event = create(OperationStatusChangedSchema, { eventId, operationId, previousStatus: "creating", status: "cancelled", occurredAt: new Date().toISOString() });
    await h.nc.jetstream().publish(scopedSubject(h.nc, statusChangedSubject(event.status)), toBinary(OperationStatusChangedSchema, event), { msgID: eventId });
    const row = await waitFor(async () => allocationOf(operationId), 5000, "tombstone");
    expect(row).toEqual(expect.objectContaining({ status: "released", providerId: null }));
  });
});
