import { Money } from "@pgw/contracts";
import { createLogger, REQUEST_ID_HEADER } from "@pgw/kit/runtime";
import { SelectQueryNode, TableNode, type KyselyPlugin, type QueryId, type RootOperationNode } from "kysely";
import { randomUUID } from "node:crypto";
import { dropDatabases, uniqueDatabaseUrl } from "../../../test/support/infra";
import { capturedLog } from "../../../test/support/log-lines";
import { verifyCallback } from "../src/domain/callback";
import { isLuhnValid } from "../src/domain/requisites";
import { startSandbox } from "../src/main";
import { transactionNumber } from "../src/domain/receipt-pdf";
import { createStore } from "../src/store";
import { jsonClient, pdfText, startCallbackReceiver, waitFor } from "./support";

const SECRET = "test-callback-secret";
const url = uniqueDatabaseUrl("provider_sandbox");
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let receiver: Awaited<ReturnType<typeof startCallbackReceiver>>;
let api: ReturnType<typeof jsonClient>;
// The sandbox's log lines (its access lines say when a request was answered).
const logged = capturedLog("provider-sandbox", "info");

beforeAll(async () => {
  receiver = await startCallbackReceiver();
  sandbox = await startSandbox(
    {
      DATABASE_URL: url,
      HTTP_PORT: "0",
      CALLBACK_SECRET: SECRET,
      CALLBACK_RETRY_BASE_MS: "100",
      EXPIRY_POLL_MS: "100",
    },
    logged.log,
  );
  api = jsonClient(`http://127.0.0.1:${sandbox.port}`);
});

afterAll(async () => {
  await sandbox?.stop();
  await receiver?.close();
  await dropDatabases([url]);
});

afterEach(async () => {
  expect((await api("DELETE", "/control/scenario")).status).toBe(200);
});

const payin = (over: Record<string, unknown> = {}) => ({
  operation_id: randomUUID(),
  method: "WT_RUB_C2C",
  amount: "1500.00",
  currency: "RUB",
  client_id: "client-1",
  callback_url: receiver.url,
  ...over,
});
const payout = (over: Record<string, unknown> = {}) => ({
  operation_id: randomUUID(),
  method: "WT_RUB_C2C",
  amount: "1000.00",
  currency: "RUB",
  destination: { number: "4111111111111111", name: "PETR SIDOROV" },
  callback_url: receiver.url,
  ...over,
});
const scenario = (body: Record<string, unknown>) => api("PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "accept", ...body });
const count = async (operationId: string) =>
  (await sandbox.db.selectFrom("sandboxOperations").select("reference").where("operationId", "=", operationId).execute()).length;

/** The one callback of `reference`, after checking its signature. */
async function callbackOf(reference: string, n = 1) {
  const calls = await waitFor(() => (receiver.of(reference).length >= n ? receiver.of(reference) : undefined));
  const last = calls[n - 1];
  expect(verifyCallback(SECRET, last.raw, last.signature)).toBe(true);
  expect(verifyCallback("another-secret", last.raw, last.signature)).toBe(false);
  return last.body;
}

describe("payins", () => {
  it("creates a card pay-in with Luhn-valid requisites, idempotently by operation_id", async () => {
    const body = payin();
    const first = await api("POST", "/api/v1/payins", body);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      reference: expect.stringMatching(/^sbx_/),
      status: "created",
      requisites: { number: expect.stringMatching(/^\d{16}$/), name: expect.any(String), bankname: expect.stringMatching(/^[a-z]+$/) },
      requires_receipt: false,
    });
    expect(isLuhnValid(first.body.requisites.number)).toBe(true);
    const again = await api("POST", "/api/v1/payins", body);
    expect(again).toMatchObject({ status: 200, body: first.body });
    expect(await count(body.operation_id)).toBe(1);
    const conflict = await api("POST", "/api/v1/payins", { ...body, amount: "1600.00" });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe("idempotency_conflict");
  });

  it("answers concurrent duplicate creates with one operation", async () => {
    const body = payin();
    const answers = await Promise.all(Array.from({ length: 6 }, () => api("POST", "/api/v1/payins", body)));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
    expect(new Set(answers.map((a) => a.body.reference)).size).toBe(1);
    expect(await count(body.operation_id)).toBe(1);
  });

  it("gives a phone for WT_RUB_PHONE", async () => {
    const res = await api("POST", "/api/v1/payins", payin({ method: "WT_RUB_PHONE" }));
    expect(res.status).toBe(200);
    expect(res.body.requisites).toEqual({ number: expect.stringMatching(/^\+79\d{9}$/), name: expect.any(String), bankname: expect.any(String) });
  });

  it.each([
    ["a missing amount", { amount: undefined }, "amount"],
    ["three decimal places", { amount: "10.001" }, "amount"],
    ["a zero amount", { amount: "0.00" }, "amount"],
    ["a numeric amount", { amount: 10 }, "amount"],
    ["a non-UUID operation_id", { operation_id: "op-1" }, "operation_id"],
    ["an unknown method", { method: "WT_EUR_SEPA" }, "method"],
    ["an unknown currency", { currency: "EUR" }, "currency"],
    ["a non-URL callback", { callback_url: "ftp://x" }, "callback_url"],
  ])("refuses %s with 400", async (_, over, field) => {
    const res = await api("POST", "/api/v1/payins", payin(over));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
  });

  it("refuses a body that is not JSON with 400", async () => {
    const res = await api("POST", "/api/v1/payins", "{not json");
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
  });

  it("answers 422 rejected and creates nothing when the scenario rejects", async () => {
    expect((await scenario({ accept: "reject" })).status).toBe(200);
    const body = payin();
    const res = await api("POST", "/api/v1/payins", body);
    expect(res).toMatchObject({ status: 422, body: { error: "rejected" } });
    expect(await count(body.operation_id)).toBe(0);
    const other = await api("POST", "/api/v1/payins", payin({ method: "WT_RUB_PHONE" }));
    expect(other.status).toBe(200);
  });

  it("never answers in time under the timeout scenario, and creates nothing", async () => {
    await scenario({ accept: "timeout" });
    const body = payin();
    const requestId = randomUUID();
    const started = Date.now();
    const headers = { "content-type": "application/json", [REQUEST_ID_HEADER]: requestId };
    await expect(api("POST", "/api/v1/payins", body, { signal: AbortSignal.timeout(500), headers })).rejects.toThrow();
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    // The sandbox is done with the request once it has logged its answer: a create would come before.
    const answered = await waitFor(async () => (await logged.lines()).find((line) => line.msg === "http request" && line.request_id === requestId));
    expect(answered.status).toBe(504);
    expect(await count(body.operation_id)).toBe(0);
  });

  it("delays acceptance by accept_delay_ms, and takes receipt and expiry from the scenario", async () => {
    await scenario({ accept_delay_ms: 400, requires_receipt: true, expires_in_s: 600 });
    const started = Date.now();
    const res = await api("POST", "/api/v1/payins", payin());
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(res.body.requires_receipt).toBe(true);
    const ttl = Date.parse(res.body.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(590_000);
    expect(ttl).toBeLessThanOrEqual(600_000);
  });
});

describe("pay and evidence", () => {
  it("pays a partial amount in legs: signed callback with the paid amount, funds, evidence with PDFs", async () => {
    const body = payin();
    const created = await api("POST", "/api/v1/payins", body);
    const ref: string = created.body.reference;
    expect((await api("GET", `/api/v1/operations/${ref}/funds`)).body).toEqual({ state: "in_progress" });
    expect((await api("GET", `/api/v1/operations/${ref}/evidence`)).body).toEqual({ legs: [] });

    const paid = await api("POST", `/control/operations/${body.operation_id}/pay`, { amount: "1400.00", legs: ["1000.01", "399.99"] });
    expect(paid).toMatchObject({ status: 200, body: { reference: ref, operation_id: body.operation_id, status: "paid", callback: { delivered: true, status_code: 200 } } });
    const cb = await callbackOf(ref);
    expect(cb).toEqual({ callback_id: expect.any(String), reference: ref, operation_id: body.operation_id, status: "completed", amount: "1400.00", occurred_at: expect.any(String) });

    expect((await api("GET", `/api/v1/operations/${ref}`)).body).toEqual({
      reference: ref,
      operation_id: body.operation_id,
      kind: "payin",
      status: "paid",
      amount: "1500.00",
      paid_amount: "1400.00",
    });
    expect((await api("GET", `/api/v1/operations/${ref}/funds`)).body).toEqual({ state: "arrived", amount: "1400.00" });

    const { legs } = (await api("GET", `/api/v1/operations/${ref}/evidence`)).body;
    expect(legs.map((l: { amount: string; legacy: boolean; items: unknown[] }) => [l.amount, l.legacy, l.items.length])).toEqual([
      ["1000.01", false, 2],
      ["399.99", false, 1],
    ]);
    for (const leg of legs) {
      const sum = leg.items.reduce((acc: Money, i: { amount: string }) => acc.plus(i.amount), new Money(0));
      expect(sum.toFixed(2)).toBe(leg.amount);
      expect(leg.items.every((i: { has_file: boolean }) => i.has_file)).toBe(true);
    }
    const item = legs[0].items[0];
    const file = await fetch(`http://127.0.0.1:${sandbox.port}/api/v1/evidence/${item.id}/file`);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("application/pdf");
    const pdf = Buffer.from(await file.arrayBuffer());
    expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
    expect(pdfText(pdf)).toEqual([
      "Payment receipt",
      `Amount: ${item.amount} RUB`,
      `Recipient: ${created.body.requisites.number}`,
      `Transaction: ${transactionNumber(item.id)}`,
      `Completed: ${item.completed_at}`,
    ]);
    // The gateway serves this file to merchants: no provider identifier of ours may show in it.
    const raw = pdf.toString("latin1");
    expect([raw.includes(ref), raw.includes(item.id), /sandbox/i.test(raw)]).toEqual([false, false, false]);
    expect(item.amount).toBe("500.00");

    const twice = await api("POST", `/control/operations/${body.operation_id}/pay`, { amount: "1400.00" });
    expect(twice.status).toBe(412);
    expect(twice.body.error.code).toBe("invalid_state");
  });

  it("refuses legs that do not add up to the amount, and leaves the operation created", async () => {
    const body = payin();
    const ref = (await api("POST", "/api/v1/payins", body)).body.reference;
    const res = await api("POST", `/control/operations/${body.operation_id}/pay`, { amount: "1500.00", legs: ["1000.00", "400.00"] });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: "legs", issue: expect.stringContaining("1500.00") }]);
    expect((await api("POST", `/control/operations/${body.operation_id}/pay`, { amount: "abc" })).status).toBe(400);
    expect((await api("GET", `/api/v1/operations/${ref}`)).body.status).toBe("created");
    expect(receiver.of(ref)).toHaveLength(0);
  });

  it("reports a legacy leg without items in legacy mode", async () => {
    await scenario({ evidence: "legacy" });
    const body = payin({ amount: "100.00" });
    const ref = (await api("POST", "/api/v1/payins", body)).body.reference;
    await api("POST", `/control/operations/${body.operation_id}/pay`, { amount: "100.00", legs: ["60.00", "40.00"] });
    const { legs } = (await api("GET", `/api/v1/operations/${ref}/evidence`)).body;
    expect(legs.map((l: { amount: string; legacy: boolean; items: unknown[] }) => [l.amount, l.legacy, l.items.length])).toEqual([
      ["60.00", true, 0],
      ["40.00", false, 1],
    ]);
  });

  it("answers 503 while the scenario says evidence is unavailable, checked at request time", async () => {
    const body = payin();
    const ref = (await api("POST", "/api/v1/payins", body)).body.reference;
    await api("POST", `/control/operations/${body.operation_id}/pay`, { amount: "1500.00" });
    await scenario({ evidence: "unavailable" });
    const down = await api("GET", `/api/v1/operations/${ref}/evidence`);
    expect(down.status).toBe(503);
    expect(down.body.error.code).toBe("unavailable");
    await api("DELETE", "/control/scenario");
    const up = await api("GET", `/api/v1/operations/${ref}/evidence`);
    expect(up.status).toBe(200);
    expect(up.body.legs).toHaveLength(1);
  });

  it("answers 503 to the first evidence request of an operation paid while the scenario says late, and its evidence to later ones", async () => {
    await scenario({ evidence: "late" });
    const body = payin();
    const ref = (await api("POST", "/api/v1/payins", body)).body.reference;
    await api("POST", `/control/operations/${body.operation_id}/pay`, { amount: "1500.00" });
    await api("DELETE", "/control/scenario"); // decided by the mode at pay time, not the scenario now
    const first = await api("GET", `/api/v1/operations/${ref}/evidence`);
    expect([first.status, first.body.error.code]).toEqual([503, "unavailable"]);
    const later = await api("GET", `/api/v1/operations/${ref}/evidence`);
    expect(later.status).toBe(200);
    expect(later.body.legs.map((l: { amount: string; items: unknown[] }) => [l.amount, l.items.length])).toEqual([["1500.00", 2]]);
  });

  it("404s receipt files and evidence that do not exist; unknown funds are not_found", async () => {
    expect((await api("GET", `/api/v1/evidence/${randomUUID()}/file`)).status).toBe(404);
    expect((await api("GET", "/api/v1/evidence/not-a-uuid/file")).status).toBe(404);
    expect((await api("GET", "/api/v1/operations/sbx_nope/evidence")).status).toBe(404);
    expect((await api("GET", "/api/v1/operations/sbx_nope")).body.error.code).toBe("not_found");
    expect((await api("GET", "/api/v1/operations/sbx_nope/funds")).body).toEqual({ state: "not_found" });
  });

  it("retries a failed callback with the same body and callback_id", async () => {
    const body = payin();
    const ref = (await api("POST", "/api/v1/payins", body)).body.reference;
    receiver.failNext(1);
    const paid = await api("POST", `/control/operations/${body.operation_id}/pay`, { amount: "1500.00" });
    expect(paid.body.callback).toEqual({ delivered: false, status_code: 500 });
    const retry = await callbackOf(ref, 2);
    expect(receiver.of(ref)[0].raw).toBe(receiver.of(ref)[1].raw);
    expect(retry.amount).toBe("1500.00");
  });
});

describe("payouts", () => {
  it("creates a payout idempotently and settles it in legs", async () => {
    const body = payout();
    const created = await api("POST", "/api/v1/payouts", body);
    expect(created).toMatchObject({ status: 200, body: { reference: expect.stringMatching(/^sbx_/), status: "created" } });
    expect((await api("POST", "/api/v1/payouts", body)).body).toEqual(created.body);
    const ref = created.body.reference;

    const paid = await api("POST", `/control/operations/${body.operation_id}/pay`, { amount: "1000.00" });
    expect(paid).toMatchObject({ status: 412, body: { error: { code: "invalid_state", message: "a payout cannot be paid" } } });
    expect((await api("POST", `/control/operations/${body.operation_id}/settle`, { legs: ["700.00", "200.00"] })).status).toBe(400);
    const settled = await api("POST", `/control/operations/${body.operation_id}/settle`, { legs: ["700.00", "300.00"] });
    expect(settled.body).toMatchObject({ status: "settled", callback: { delivered: true } });
    expect(await callbackOf(ref)).toMatchObject({ status: "completed", amount: "1000.00", operation_id: body.operation_id });
    expect((await api("GET", `/api/v1/operations/${ref}`)).body).toMatchObject({ kind: "payout", status: "settled", paid_amount: "1000.00" });

    const { legs } = (await api("GET", `/api/v1/operations/${ref}/evidence`)).body;
    expect(legs.map((l: { amount: string }) => l.amount)).toEqual(["700.00", "300.00"]);
    const pdf = Buffer.from(await (await fetch(`http://127.0.0.1:${sandbox.port}/api/v1/evidence/${legs[1].items[0].id}/file`)).arrayBuffer());
    expect(pdfText(pdf)).toContain("Recipient: 4111111111111111");
    expect(pdfText(pdf)).toContain("Amount: 300.00 RUB");
  });

  it("settles the whole amount in one leg by default", async () => {
    const body = payout({ amount: "250.50" });
    const ref = (await api("POST", "/api/v1/payouts", body)).body.reference;
    await api("POST", `/control/operations/${body.operation_id}/settle`);
    expect((await callbackOf(ref)).amount).toBe("250.50");
  });

  it("follows the scenario's reject too, and validates the destination", async () => {
    await scenario({ accept: "reject" });
    expect((await api("POST", "/api/v1/payouts", payout())).status).toBe(422);
    const res = await api("POST", "/api/v1/payouts", payout({ destination: { name: "x" } }));
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: "destination.number", issue: "is required" }]);
  });
});

describe("decline, expire, cancel", () => {
  it.each(["decline", "expire"])("%s calls back without an amount and is final", async (event) => {
    const body = payin();
    const ref = (await api("POST", "/api/v1/payins", body)).body.reference;
    const res = await api("POST", `/control/operations/${body.operation_id}/${event}`);
    const status = `${event}d`;
    expect(res.body).toMatchObject({ status, callback: { delivered: true, status_code: 200 } });
    const cb = await callbackOf(ref);
    expect(cb.status).toBe(status);
    expect(cb).not.toHaveProperty("amount");
    expect((await api("GET", `/api/v1/operations/${ref}/funds`)).body).toEqual({ state: "not_found" });
    expect((await api("POST", `/control/operations/${body.operation_id}/pay`, { amount: "1.00" })).status).toBe(412);
  });

  it("expires lapsed requisites by timer and calls back", async () => {
    await scenario({ expires_in_s: 1 });
    const body = payin();
    const created = await api("POST", "/api/v1/payins", body);
    expect(created.body.expires_at).toEqual(expect.any(String));
    const cb = await callbackOf(created.body.reference);
    expect(cb.status).toBe("expired");
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(created.body.expires_at));
    expect((await api("GET", `/api/v1/operations/${created.body.reference}`)).body.status).toBe("expired");
  });

  it("cancels a created operation without a callback; a finished one keeps its status", async () => {
    const body = payin();
    const ref = (await api("POST", "/api/v1/payins", body)).body.reference;
    expect((await api("POST", `/api/v1/operations/${ref}/cancel`)).body).toEqual({ reference: ref, status: "cancelled" });
    expect((await api("POST", `/api/v1/operations/${ref}/cancel`)).body).toEqual({ reference: ref, status: "cancelled" });
    expect((await api("POST", `/control/operations/${body.operation_id}/pay`, { amount: "1.00" })).status).toBe(412);

    const paidBody = payin();
    const paidRef = (await api("POST", "/api/v1/payins", paidBody)).body.reference;
    await api("POST", `/control/operations/${paidBody.operation_id}/pay`, { amount: "1500.00" });
    expect((await api("POST", `/api/v1/operations/${paidRef}/cancel`)).body).toEqual({ reference: paidRef, status: "paid" });
    expect((await api("POST", "/api/v1/operations/sbx_nope/cancel")).status).toBe(404);
    // The pay made after the cancel has been called back, and a change's first callback attempt is
    // over before its call answers: a callback of the cancel would have been received already.
    expect((await callbackOf(paidRef)).status).toBe("completed");
    expect(receiver.of(ref)).toHaveLength(0);
  });

  it.each(["pay", "settle", "decline", "expire"])("control %s on an unknown operation is 404", async (event) => {
    for (const id of [randomUUID(), "not-a-uuid"]) {
      const res = await api("POST", `/control/operations/${id}/${event}`, { amount: "1.00" });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
  });
});

describe("scenario control", () => {
  const defaults = { accept: "accept", accept_delay_ms: 0, requires_receipt: false, evidence: "complete", expires_in_s: null };

  it("stores, lists and resets scenarios", async () => {
    const put = await api("PUT", "/control/scenario", { method: "WT_RUB_PHONE", accept: "reject", evidence: "legacy" });
    expect(put.body).toEqual({ ...defaults, method: "WT_RUB_PHONE", accept: "reject", evidence: "legacy" });
    expect((await api("GET", "/control/scenario")).body.scenarios).toEqual([
      { ...defaults, method: "WT_RUB_C2C" },
      { ...defaults, method: "WT_RUB_PHONE", accept: "reject", evidence: "legacy" },
    ]);
    const reset = await api("DELETE", "/control/scenario");
    expect(reset.body.scenarios).toEqual([
      { ...defaults, method: "WT_RUB_C2C" },
      { ...defaults, method: "WT_RUB_PHONE" },
    ]);
    expect((await api("POST", "/api/v1/payins", payin({ method: "WT_RUB_PHONE" }))).status).toBe(200);
  });

  it("is followed by a second replica on the same database, which caches scenarios too", async () => {
    const replica = await startSandbox({ DATABASE_URL: url, HTTP_PORT: "0", LOG_LEVEL: "silent", CALLBACK_SECRET: SECRET });
    try {
      const other = jsonClient(`http://127.0.0.1:${replica.port}`);
      const accepted = payin();
      expect((await other("POST", "/api/v1/payins", accepted)).status).toBe(200); // the default, now cached there
      expect((await scenario({ accept: "reject" })).status).toBe(200);
      const refused = await waitFor(async () => {
        const res = await other("POST", "/api/v1/payins", payin());
        return res.status === 422 ? res : undefined;
      });
      expect(refused.body).toEqual({ error: "rejected" });
      // A repeat of a create the provider accepted still answers that operation under a rejecting scenario.
      expect((await other("POST", "/api/v1/payins", accepted)).status).toBe(200);
      expect((await api("DELETE", "/control/scenario")).status).toBe(200);
      await waitFor(async () => ((await other("POST", "/api/v1/payins", payin())).status === 200 ? true : undefined));
    } finally {
      await replica.stop();
    }
  });

  it("does not cache a scenario read that a change overtook", async () => {
    // This store reads through a plugin that counts its scenario reads and can hold the rows of the
    // next one until released: a read that a change overtakes while its answer is on the way.
    let reads = 0;
    let holdNext: { arrived: () => void; released: Promise<void> } | undefined;
    const held = new WeakMap<QueryId, { arrived: () => void; released: Promise<void> }>();
    const isScenarioRead = (node: RootOperationNode) =>
      SelectQueryNode.is(node) && !node.with && node.from?.froms.some((f) => TableNode.is(f) && f.table.identifier.name === "sandbox_scenarios");
    const holding: KyselyPlugin = {
      transformQuery({ node, queryId }) {
        if (isScenarioRead(node)) {
          reads++;
          if (holdNext) held.set(queryId, holdNext);
          holdNext = undefined;
        }
        return node;
      },
      async transformResult({ queryId, result }) {
        const hold = held.get(queryId);
        hold?.arrived();
        await hold?.released;
        return result;
      },
    };
    const store = createStore(sandbox.db.withPlugin(holding));
    const listener = store.listenForScenarioChanges(url, createLogger("sandbox-test", "silent"));
    // Listening: the store caches from now on, so a second read of a method reads nothing.
    await waitFor(async () => {
      await store.scenario("WT_RUB_PHONE");
      const before = reads;
      await store.scenario("WT_RUB_PHONE");
      return reads === before || undefined;
    });
    let arrived = () => undefined as void;
    let release = () => undefined as void;
    const rowsArrived = new Promise<void>((r) => (arrived = r));
    holdNext = { arrived, released: new Promise<void>((r) => (release = r)) };
    const overtaken = store.scenario("WT_RUB_C2C"); // reads the default, then waits
    await rowsArrived;
    await store.putScenario({ method: "WT_RUB_C2C", accept: "reject", acceptDelayMs: 0, requiresReceipt: false, evidence: "complete", expiresInS: null });
    release();
    expect((await overtaken).accept).toBe("accept");
    expect((await store.scenario("WT_RUB_C2C")).accept).toBe("reject");
    await listener.stop();
  });

  it.each([
    [{ method: "WT_RUB_C2C", accept: "maybe" }, "accept"],
    [{ method: "NOPE", accept: "accept" }, "method"],
    [{ method: "WT_RUB_C2C", accept: "accept", accept_delay_ms: -1 }, "accept_delay_ms"],
    [{ method: "WT_RUB_C2C", accept: "accept", evidence: "some" }, "evidence"],
    [{ method: "WT_RUB_C2C", accept: "accept", expires_in_s: 1.5 }, "expires_in_s"],
    [{ method: "WT_RUB_C2C", accept: "accept", requires_receipt: "yes" }, "requires_receipt"],
  ])("refuses %j with 400", async (body, field) => {
    const res = await api("PUT", "/control/scenario", body);
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
  });
});
