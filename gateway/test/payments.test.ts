import { fromBinary, toJson } from "@bufbuild/protobuf";
import { formatAmount, Money } from "@pgw/contracts";
import { enqueueEvent } from "@pgw/kit/events";
import { createPeerTransport } from "@pgw/kit/rpc";
import { requestHash } from "../../services/operations/src/domain/create-rules";
import { operationKeyHash } from "../../services/operations/src/store";
import { providerUpdateEvent } from "../../services/routing/src/events";
import { OperationStatusChangedSchema, type OperationStatusChanged } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { OperationSchema, OperationsService, OperationType } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { randomUUID } from "node:crypto";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { Code, createClient } from "@connectrpc/connect";
import pg from "pg";
import { connect } from "nats";
import { merchantClient, newMoid, sandboxControl } from "../../test/support/merchant";
import { request } from "../../test/support/http";
import { pollUntil } from "../../test/support/poll";
import { metricTotal } from "../../test/support/metrics";
import { natsUrl } from "../../test/support/infra";
import { admin, createShopWithKey, startStack, type Stack } from "../../test/support/stack";
import { startReceiver } from "../../services/notifier/test/support/receiver";
import { journalViolations, NO_VIOLATIONS } from "../../services/ledger/test/support";

let stack: Stack;
let m: ReturnType<typeof merchantClient>;
let sandbox: ReturnType<typeof sandboxControl>;
let shopId: string;
let apiKey: string;

beforeAll(async () => {
  stack = await startStack({
    env: {
      operations: { CREATE_DEADLINE_MS: "3000", CANCEL_DEADLINE_MS: "1000" },
      // Longer than any create here takes (3 s deadline), so only orphans qualify.
      ledger: { ORPHAN_RESERVE_AGE_MS: "4000", ORPHAN_RESERVE_SWEEP_MS: "500" },
    },
  });
  const shop = await createShopWithKey(stack, { overdraft_limit: "100000000", rate_limit_rps: 100000 });
  shopId = shop.shopId;
  apiKey = shop.apiKey;
  m = merchantClient(stack, shop.apiKey);
  sandbox = sandboxControl(stack);
}, 120_000);
afterAll(() => stack?.stop());
afterEach(() => sandbox.reset());

const paymentBody = (extra: Record<string, unknown> = {}) => ({
  merchant_operation_id: newMoid(),
  client_id: "client-1",
  method: "WT_RUB_C2C",
  amount: "1500.00",
  currency: "RUB",
  ...extra,
});
const cardPayout = (extra: Record<string, unknown> = {}) => paymentBody({ number: "4111111111111111", ...extra });
/** How a terminal operation that captured nothing shows its settlement figures. */
const NOTHING_CAPTURED_RUB = { actual_amount: "0.00", settlement_amount: "0.00", commission_amount: "0.00", settlement_currency: "RUB" };
const countOperations = () => stack.services.operations.db.operation.count();

describe("create payment", () => {
  it("answers a pending payment with allocated requisites and the presence rules of docs/api.md, The operation object", async () => {
    const res = await m.payment(paymentBody({ amount: "100.50" }));
    expect(res.status).toBe(200);
    const op = res.body;
    expect(op).toMatchObject({ type: "payment", status: "pending", method: "WT_RUB_C2C", expected_amount: "100.50", actual_amount: "0.00", currency: "RUB" });
    expect(op.operation_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(op.number).toMatch(/^\d{16}$/);
    expect(typeof op.name).toBe("string");
    expect(typeof op.bankname).toBe("string");
    expect(typeof op.bankname_details).toBe("string");
    expect(op.settlement_currency).toBe("RUB");
    expect(op.settlement_amount).toMatch(/^\d+\.\d{2}$/);
    expect(op.commission_amount).toMatch(/^\d+\.\d{2}$/);
    for (const absent of ["recorded_amount", "recorded_currency", "payment_url", "receipts", "receipt_evidence_status", "manual_check_reason", "expires_at", "fx_rate", "fx_source", "external_confirmation"]) {
      expect(op).not.toHaveProperty(absent);
    }
    expect(JSON.stringify(op)).not.toMatch(/provider|route|allocation|sandbox/i);
  });

  it("answers payment_url only on /link: null without checkout, PAYMENT_PAGE_HOST/<id> with it", async () => {
    const off = await m.paymentLink(paymentBody());
    expect(off.status).toBe(200);
    expect(off.body.payment_url).toBeNull();
    const withCheckout = await createShopWithKey(stack, { checkout_enabled: true });
    const on = await merchantClient(stack, withCheckout.apiKey).paymentLink(paymentBody());
    expect(on.body.payment_url).toBe(`${stack.publicUrl}/pay/${on.body.operation_id}`);
  });

  it("shows expires_at only when the provider reports one", async () => {
    await sandbox.scenario({ method: "WT_RUB_PHONE", accept: "accept", expires_in_s: 600 });
    const res = await m.payment(paymentBody({ method: "WT_RUB_PHONE" }));
    expect(res.status).toBe(200);
    expect(new Date(res.body.expires_at).getTime()).toBeGreaterThan(Date.now() + 500_000);
    expect(res.body.number).toMatch(/^\+7\d{10}$/);
  });

  it("answers awaiting_confirmation with external_confirmation when the route requires a receipt", async () => {
    await sandbox.scenario({ method: "WT_RUB_C2C", accept: "accept", requires_receipt: true });
    const res = await m.payment(paymentBody());
    expect(res.body.status).toBe("awaiting_confirmation");
    expect(res.body.external_confirmation).toEqual({ required: true, methods: ["receipt"] });
  });
});

describe("create payout", () => {
  it("routes a card payout: number kept, anonymous name, bankname ignored", async () => {
    const res = await m.payout(cardPayout({ bankname: "not-a-bank", name: "" }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: "payout", status: "pending", number: "4111111111111111", name: "аноним" });
    expect(res.body).not.toHaveProperty("bankname");
    expect(res.body).not.toHaveProperty("recorded_amount");
  });

  it("routes a phone payout with the bank code and its human name", async () => {
    const res = await m.payout(paymentBody({ method: "WT_RUB_PHONE", number: "+79161234567", bankname: "sberbank", name: "Иван" }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ number: "+79161234567", name: "Иван", bankname: "sberbank", bankname_details: "Сбербанк" });
  });

  it("lists the bank dictionary", async () => {
    for (const query of ["currency=RUB&currency=USDT", "currency=EUR", "currency="]) {
      const refused = await m.get(`/v1/banks?${query}`);
      expect({ query, status: refused.status, details: refused.body.error?.details }).toEqual({ query, status: 400, details: [{ field: "currency", issue: "must be RUB or USDT" }] });
    }
    const res = await m.get("/v1/banks?currency=RUB");
    expect(res.status).toBe(200);
    expect(res.body.banks).toContainEqual({ code: "sberbank", name: "Сбербанк" });
    expect(res.body.banks.every((b: { code: string }) => /^[a-z0-9]+$/.test(b.code))).toBe(true);
  });
});

describe("payout funds", () => {
  it("refuses a payout the balance cannot cover with 422, holding nothing, and reserves once funded", async () => {
    const poor = await createShopWithKey(stack);
    const client = merchantClient(stack, poor.apiKey);
    const body = cardPayout({ amount: "100.00" });
    const refused = await client.payout(body);
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe("insufficient_balance");
    expect((await client.state({ merchant_operation_id: body.merchant_operation_id })).status).toBe(404);

    const funded = await admin(stack, "POST", `/admin/api/shops/${poor.shopId}/adjustments`, { currency: "RUB", amount: "500.00", reason: "prefunding" });
    expect(funded.status).toBe(201);
    const accepted = await client.payout(body);
    expect(accepted.status).toBe(200);
    const total = Number(accepted.body.settlement_amount);
    expect(total).toBeGreaterThan(100);
    const rub = (await client.get("/v1/balances")).body.balances.find((b: { currency: string }) => b.currency === "RUB");
    expect(rub).toEqual({ currency: "RUB", balance: (500 - total).toFixed(2), current_minus: "0.00", reserved: total.toFixed(2) });

    await sandbox.decline(accepted.body.operation_id);
    const declined = await client.waitForStatus(accepted.body.operation_id, "declined");
    // Nothing was charged: the figures settle to the captured amount, zero.
    expect(declined.body).toMatchObject(NOTHING_CAPTURED_RUB);
    const after = await client.waitForBalance("RUB", "500.00");
    expect(after).toEqual({ currency: "RUB", balance: "500.00", current_minus: "0.00", reserved: "0.00" });
  });

  it("a Reserve the ledger carries out after the create gave up on it holds nothing: the create's release went first", async () => {
    const shop = await createShopWithKey(stack);
    const client = merchantClient(stack, shop.apiKey);
    expect((await admin(stack, "POST", `/admin/api/shops/${shop.shopId}/adjustments`, { currency: "RUB", amount: "500.00", reason: "prefunding" })).status).toBe(201);
    // Stall the ledger's Reserve before it moves anything (it reads the tariffs first) for longer
    // than operations waits for it (5 s); it goes on once the lock is gone, as a stalled unit would.
    const ledgerDb = new pg.Client({ connectionString: stack.databases.ledger });
    await ledgerDb.connect();
    // Reserves the ledger (any replica) refused as invalid_state: a late Reserve meeting the release's tombstone is one.
    const reservesRefused = () => metricTotal(stack.replicas.ledger.map((r) => r.healthPort), "grpc_server_handling_seconds_count", { method: "pgw.ledger.v1.LedgerService/Reserve", code: String(Code.FailedPrecondition) });
    const refusedBefore = await reservesRefused();
    await ledgerDb.query("BEGIN");
    await ledgerDb.query("LOCK TABLE tariffs IN ACCESS EXCLUSIVE MODE");
    let refused: Awaited<ReturnType<typeof client.payout>>;
    try {
      refused = await client.payout(cardPayout({ amount: "100.00" }));
    } finally {
      await ledgerDb.query("ROLLBACK");
      await ledgerDb.end();
    }
    expect(refused.status).toBe(503);
    // The late Reserve runs once the lock is gone, and the ledger refuses it: the release was there first.
    expect(await pollUntil(reservesRefused, (n) => n > refusedBefore)).toBe(refusedBefore + 1);
    const rub = (await client.get("/v1/balances")).body.balances.find((b: { currency: string }) => b.currency === "RUB");
    expect(rub).toEqual({ currency: "RUB", balance: "500.00", current_minus: "0.00", reserved: "0.00" });
  }, 30_000);

  it("returns a reserve held for an operation operations does not know (the orphan sweep), and keeps a live payout's", async () => {
    const shop = await createShopWithKey(stack);
    const client = merchantClient(stack, shop.apiKey);
    expect((await admin(stack, "POST", `/admin/api/shops/${shop.shopId}/adjustments`, { currency: "RUB", amount: "500.00", reason: "prefunding" })).status).toBe(201);
    const live = await client.payout(cardPayout({ amount: "100.00" }));
    expect(live.status).toBe(200);
    const released = () => metricTotal(stack.replicas.ledger.map((r) => r.healthPort), "ledger_orphan_reserves_released_total");
    const releasedBefore = await released();
    // A reserve whose create is gone (both its failure and its release were lost on the way).
    const ledger = createClient(LedgerService, createPeerTransport(`http://127.0.0.1:${stack.services.ledger.grpcPort}`));
    await ledger.reserve({ shopId: shop.shopId, operationId: randomUUID(), method: "WT_RUB_C2C", amount: "100.00", currency: "RUB", settlementCurrency: "RUB", overdraftLimit: "0" });
    const rub = async () => (await client.get("/v1/balances")).body.balances.find((b: { currency: string }) => b.currency === "RUB");
    expect(await rub()).toMatchObject({ balance: "297.00", reserved: "203.00" });
    expect(await client.waitForBalance("RUB", "398.50", 15_000)).toMatchObject({ balance: "398.50", reserved: "101.50" });
    // More passes: a second orphan is released only by a pass once it is 4 s old, and every pass
    // looks at the older live reserve first. That one stays.
    await ledger.reserve({ shopId: shop.shopId, operationId: randomUUID(), method: "WT_RUB_C2C", amount: "100.00", currency: "RUB", settlementCurrency: "RUB", overdraftLimit: "0" });
    expect(await rub()).toMatchObject({ balance: "297.00", reserved: "203.00" });
    expect(await client.waitForBalance("RUB", "398.50", 15_000)).toMatchObject({ balance: "398.50", reserved: "101.50" });
    expect(await released()).toBeGreaterThanOrEqual(releasedBefore + 2);
  }, 45_000);

  it("finds an orphan reserve however many payouts have been held longer (the sweep looked at the oldest 100 only)", async () => {
    const shop = await createShopWithKey(stack, { overdraft_limit: "100000", rate_limit_rps: 100000 });
    const client = merchantClient(stack, shop.apiKey);
    for (let batch = 0; batch < 11; batch++) {
      const created = await Promise.all(Array.from({ length: 10 }, () => client.payout(cardPayout({ amount: "10.00" }))));
      expect(created.map((c) => c.status)).toEqual(Array(10).fill(200));
    }
    const ledger = createClient(LedgerService, createPeerTransport(`http://127.0.0.1:${stack.services.ledger.grpcPort}`));
    await ledger.reserve({ shopId: shop.shopId, operationId: randomUUID(), method: "WT_RUB_C2C", amount: "100.00", currency: "RUB", settlementCurrency: "RUB", overdraftLimit: "100000" });
    const reserved = async () => (await client.get("/v1/balances")).body.balances.find((b: { currency: string }) => b.currency === "RUB").reserved;
    expect(await reserved()).toBe("1218.00"); // 110 × 10.15 + 101.50
    expect(await pollUntil(reserved, (r) => r === "1116.50", 15_000, 250)).toBe("1116.50");
  }, 60_000);

  it("returns a reserve an internal caller made under a payment's id (no payout stands behind it)", async () => {
    const shop = await createShopWithKey(stack, { overdraft_limit: "1000" });
    const client = merchantClient(stack, shop.apiKey);
    const payment = await client.payment(paymentBody());
    expect(payment.status).toBe(200);
    const ledger = createClient(LedgerService, createPeerTransport(`http://127.0.0.1:${stack.services.ledger.grpcPort}`));
    await ledger.reserve({ shopId: shop.shopId, operationId: payment.body.operation_id, method: "WT_RUB_C2C", amount: "50.00", currency: "RUB", settlementCurrency: "RUB", overdraftLimit: "1000" });
    const rub = async () => (await client.get("/v1/balances")).body.balances.find((b: { currency: string }) => b.currency === "RUB");
    expect(await rub()).toMatchObject({ reserved: "50.75" });
    expect(await pollUntil(rub, (r) => r.reserved === "0.00", 15_000, 250)).toEqual({ currency: "RUB", balance: "0.00", current_minus: "0.00", reserved: "0.00" });
  }, 30_000);
});

describe("validation", () => {
  it.each([
    [{ amount: "10.001" }, ["amount"]],
    [{ amount: 10 }, ["amount"]],
    [{ amount: "-1.00" }, ["amount"]],
    [{ amount: "0" }, ["amount"]],
    [{ currency: "EUR" }, ["currency"]],
    [{ method: "CASH" }, ["method"]],
    [{ merchant_operation_id: "" }, ["merchant_operation_id"]],
    [{ client_id: undefined }, ["client_id"]],
    [{ client_ip: "999.1.1.1" }, ["client_ip"]],
    [{ number: 4111 }, ["number"]],
  ])("refuses %j with 400 naming %j", async (override, fields) => {
    const before = await countOperations();
    const res = await m.payment(paymentBody(override));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(fields);
    expect(await countOperations()).toBe(before);
  });

  it.each([
    [{ method: "WT_RUB_C2C", number: "4111111111111112" }, ["number"]],
    [{ method: "WT_RUB_C2C" }, ["number"]],
    [{ method: "WT_RUB_PHONE", number: "+79161234567" }, ["bankname"]],
    [{ method: "WT_RUB_PHONE", number: "12", bankname: "nobank" }, ["bankname", "number"]],
  ])("refuses payout destination %j", async (override, fields) => {
    const res = await m.payout(paymentBody(override));
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(fields);
  });

  it.each(["100.5", "1500", "1500.0", "1e3", "1.234", "01.00", "0.00"])(
    "refuses amount %j, not a positive amount with exactly 2 decimal places (spec: scale 2), on every create endpoint, naming amount and creating nothing",
    async (amount) => {
      const before = await countOperations();
      for (const create of [m.payment, m.paymentLink, m.payout]) {
        const body = cardPayout({ amount });
        const res = await create(body);
        expect({ status: res.status, code: res.body.error?.code, details: res.body.error?.details }).toEqual({
          status: 400,
          code: "validation_error",
          details: [{ field: "amount", issue: "must be a positive decimal string with exactly 2 decimal places, e.g. 100.50" }],
        });
        expect((await m.state({ merchant_operation_id: body.merchant_operation_id })).status).toBe(404);
      }
      expect(await countOperations()).toBe(before);
    },
  );

  it("echoes expected_amount as sent, on creation and on every read", async () => {
    for (const amount of ["1.00", "1500.00", "1000000.00"]) {
      const created = await m.payment(paymentBody({ amount }));
      expect({ amount, status: created.status, expected_amount: created.body.expected_amount }).toEqual({ amount, status: 200, expected_amount: amount });
      expect((await m.state({ operation_id: created.body.operation_id })).body.expected_amount).toBe(amount);
    }
  });

  it("ignores unknown fields and scope fields in the body", async () => {
    const res = await m.payment(paymentBody({ shop_id: "00000000-0000-4000-8000-000000000000", merchant_id: "x", colour: "blue" }));
    expect(res.status).toBe(200);
    expect((await stack.services.operations.db.operation.findUniqueOrThrow({ where: { id: res.body.operation_id } })).shopId).toBe(shopId);
  });

  it("names every bad field when some have the wrong JSON type, not only those (nothing created)", async () => {
    const before = await countOperations();
    const res = await m.post("/v1/payout", { client_id: 5, method: "WT_RUB_C2C", amount: "1.001", currency: "RUB", number: ["4111111111111111"], client_ip: "x" });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      { field: "merchant_operation_id", issue: "is required" },
      { field: "client_id", issue: "must be a string" },
      { field: "client_ip", issue: "must be an IPv4 or IPv6 address" },
      { field: "amount", issue: "must be a positive decimal string with exactly 2 decimal places, e.g. 100.50" },
      { field: "number", issue: "must be a string" },
    ]);
    expect(await countOperations()).toBe(before);
  });

  it("answers invalid JSON with 400 and a body over 64 KiB with 413", async () => {
    const bad = await m.post("/v1/payment", "{nope");
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("validation_error");
    const huge = await m.post("/v1/payment", paymentBody({ client_id: "x".repeat(70 * 1024) }));
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe("payload_too_large");
    const notObject = await m.post("/v1/payment", "[1,2]");
    expect(notObject.status).toBe(400);
  });

  describe("bytes that are not plain UTF-8 JSON", () => {
    const send = (body: Buffer, headers: Record<string, string> = {}) =>
      request(`${stack.publicUrl}/v1/payment`, { method: "POST", headers: { "content-type": "application/json", "X-API-Key": apiKey, ...headers }, body });
    const json = (extra: Record<string, unknown> = {}) => Buffer.from(JSON.stringify(paymentBody(extra)));

    it("refuses invalid UTF-8 with 400, so keys sent in another encoding never merge into one", async () => {
      const before = await countOperations();
      const moid = newMoid("u8");
      // Two different keys in Latin-1 bytes: read leniently, both would become "<moid>-\uFFFD".
      for (const byte of ["ff", "fe"]) {
        const body = Buffer.concat([json({ merchant_operation_id: moid }).subarray(0, -1), Buffer.from(`,"merchant_operation_id":"${moid}-`), Buffer.from(byte, "hex"), Buffer.from('"}')]);
        const res = await send(body);
        expect(res.status).toBe(400);
        expect(res.body.error).toEqual({ code: "validation_error", message: "request body is not valid UTF-8", details: [{ field: "body", issue: "must be UTF-8 encoded JSON" }] });
      }
      expect(await countOperations()).toBe(before);
    });

    it("decompresses gzip, deflate and br bodies, and refuses with 400 one that does not decode as labelled", async () => {
      for (const [encoding, compress] of [["gzip", gzipSync], ["deflate", deflateSync], ["br", brotliCompressSync]] as const) {
        const ok = await send(compress(json()), { "content-encoding": encoding });
        expect({ encoding, status: ok.status }).toEqual({ encoding, status: 200 });
        const before = await countOperations();
        const bad = await send(json(), { "content-encoding": encoding });
        expect({ encoding, status: bad.status, field: bad.body.error.details[0].field }).toEqual({ encoding, status: 400, field: "content-encoding" });
        expect(await countOperations()).toBe(before);
      }
      expect((await send(json(), { "content-encoding": "compress" })).status).toBe(415);
      // The 64 KiB limit applies to what a body decompresses to.
      const bomb = await send(gzipSync(json({ client_id: "x".repeat(1024 * 1024) })), { "content-encoding": "gzip" });
      expect(bomb.status).toBe(413);
    });

    it("reads JSON nested thousands of levels deep or with __proto__ keys like any unknown field: ignored, never a 500", async () => {
      const deep = Buffer.from(JSON.stringify(paymentBody()).slice(0, -1) + `,"extra":${"[".repeat(20_000)}${"]".repeat(20_000)}}`);
      expect((await send(deep)).status).toBe(200);
      const proto = Buffer.from(JSON.stringify(paymentBody()).slice(0, -1) + `,"__proto__":{"polluted":true},"meta":{"__proto__":1}}`);
      const res = await send(proto);
      expect(res.status).toBe(200);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const state = await m.post("/v1/get_operation_state", `{"operation_id":"${res.body.operation_id}","x":${"[".repeat(20_000)}${"]".repeat(20_000)}}`);
      expect(state.status).toBe(200);
    });
  });

  it("refuses a body of another media type with 415 and reads one sent without a Content-Type as JSON", async () => {
    const before = await countOperations();
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/xml"]) {
      const res = await m.post("/v1/payment", paymentBody(), { "content-type": type });
      expect(res.status).toBe(415);
      expect(res.body.error).toEqual({ code: "unsupported_media_type", message: "the request body must be application/json", details: [{ field: "content-type", issue: "must be application/json" }] });
    }
    expect((await m.post("/v1/get_operation_state", { merchant_operation_id: "x" }, { "content-type": "text/plain" })).status).toBe(415);
    expect(await countOperations()).toBe(before);
    const untyped = await m.post("/v1/payment", paymentBody(), { "content-type": "" });
    expect(untyped.status).toBe(200);
    expect((await m.post("/v1/payment", paymentBody(), { "content-type": "application/json; charset=utf-8" })).status).toBe(200);
  });

  it("refuses U+0000 in any string with 400 naming the field, where Postgres would have failed with a 500", async () => {
    const before = await countOperations();
    const created = await m.payment(paymentBody({ merchant_operation_id: "a\u0000b", client_id: "c\u0000" }));
    expect(created.status).toBe(400);
    expect(created.body.error.details).toEqual([
      { field: "merchant_operation_id", issue: "must not contain the U+0000 character" },
      { field: "client_id", issue: "must not contain the U+0000 character" },
    ]);
    expect((await m.payout(cardPayout({ name: "x\u0000y" }))).body.error.details).toEqual([{ field: "name", issue: "must not contain the U+0000 character" }]);
    expect(await countOperations()).toBe(before);
    expect((await m.state({ merchant_operation_id: "a\u0000" })).status).toBe(400);
    const op = (await m.payment(paymentBody())).body;
    const cancel = await m.cancel({ operation_id: op.operation_id, reason: "a\u0000b" });
    expect(cancel.status).toBe(400);
    expect(cancel.body.error.details).toEqual([{ field: "reason", issue: "must not contain the U+0000 character" }]);
    expect((await m.state({ operation_id: op.operation_id })).body.status).toBe("pending");
  });

  it("refuses a lone UTF-16 surrogate in any string with 400 naming the field: two keys differing only in one were stored alike (U+FFFD) and shared an operation", async () => {
    const before = await countOperations();
    for (const key of ["s1\ud800", "s1\ud801", "s1\udc00"]) {
      const created = await m.payment(paymentBody({ merchant_operation_id: key }));
      expect(created.status).toBe(400);
      expect(created.body.error.details).toEqual([{ field: "merchant_operation_id", issue: "must be valid Unicode text (it holds a lone surrogate)" }]);
    }
    expect(await countOperations()).toBe(before);
    expect((await m.state({ merchant_operation_id: "s1\ud801" })).status).toBe(400);
    const paired = await m.payment(paymentBody({ merchant_operation_id: `s1😀${newMoid()}` })); // a surrogate pair is one character
    expect(paired.status).toBe(200);
  });

  it("ignores unknown fields even when they hold U+0000 or a lone surrogate, in their value or their name (docs/architecture.md, Validation: unknown fields are ignored)", async () => {
    const junk = { note: "a\u0000b", "k\u0000": "v", extra: { deep: ["\ud800"] } };
    const body = paymentBody(junk);
    const created = await m.payment(body);
    expect(created.status).toBe(200);
    expect(created.body).not.toHaveProperty("note");
    // Still the same request for idempotency: the ignored fields are not part of it.
    expect((await m.payment({ ...body, note: "other" })).body.operation_id).toBe(created.body.operation_id);
    const read = await m.state({ operation_id: created.body.operation_id, ...junk });
    expect(read.status).toBe(200);
    expect(read.body.operation_id).toBe(created.body.operation_id);
    const cancel = await m.cancel({ operation_id: created.body.operation_id, ...junk });
    expect(cancel.status).toBe(200);
    expect(cancel.body.operation.status).toBe("cancelled");
    // A known field is still refused.
    expect((await m.cancel({ operation_id: created.body.operation_id, reason: "\ud800", ...junk })).body.error.details).toEqual([{ field: "reason", issue: "must be valid Unicode text (it holds a lone surrogate)" }]);
  });

  it("refuses U+0000 on operations' own gRPC API too (internal callers skip the gateway): InvalidArgument, not Internal", async () => {
    const operations = createClient(OperationsService, createPeerTransport(`http://127.0.0.1:${stack.services.operations.grpcPort}`));
    const merchantId = (await stack.services.operations.db.shop.findUniqueOrThrow({ where: { id: shopId } })).merchantId;
    const refused = (call: Promise<unknown>) => call.then(() => "accepted", (err: { rawMessage?: string; details?: unknown; code?: number }) => `${err.code}: ${err.rawMessage}`);
    const base = { shopId, merchantId, type: OperationType.PAYMENT, clientId: "c", method: "WT_RUB_C2C", amount: "10.00", currency: "RUB" };
    expect(await refused(operations.createOperation({ ...base, merchantOperationId: "a\u0000b" }))).toBe(`${Code.InvalidArgument}: request validation failed`);
    expect(await refused(operations.getOperationState({ shopId, ref: { ref: { case: "merchantOperationId", value: "a\u0000" } } }))).toBe(`${Code.InvalidArgument}: request validation failed`);
    const op = (await m.payment(paymentBody())).body;
    expect(await refused(operations.cancelOperation({ shopId, ref: { ref: { case: "operationId", value: op.operation_id } }, reason: "\u0000" }))).toBe(`${Code.InvalidArgument}: request validation failed`);
    expect((await m.state({ operation_id: op.operation_id })).body.status).toBe("pending");
  });

  it("starts no create whose caller has stopped waiting (a request read late): Unavailable, nothing created, the key still free", async () => {
    const operations = createClient(OperationsService, createPeerTransport(`http://127.0.0.1:${stack.services.operations.grpcPort}`));
    const merchantId = (await stack.services.operations.db.shop.findUniqueOrThrow({ where: { id: shopId } })).merchantId;
    const body = { shopId, merchantId, type: OperationType.PAYOUT, merchantOperationId: newMoid(), clientId: "c", method: "WT_RUB_C2C", amount: "10.00", currency: "RUB", number: "4111111111111111" };
    const before = await countOperations();
    const late = await operations.createOperation({ ...body, respondByUnixMs: BigInt(Date.now() - 1) }).then(() => "created", (err: { code?: number }) => err.code);
    expect(late).toBe(Code.Unavailable);
    expect(await countOperations()).toBe(before);
    const inTime = await operations.createOperation({ ...body, respondByUnixMs: BigInt(Date.now() + 20_000) });
    expect(inTime.operation?.status).toBe("pending");
  });

  it("ends a create called with only a gRPC deadline within it: a provider slower than the deadline leaves no operation and no reserve behind", async () => {
    const operations = createClient(OperationsService, createPeerTransport(`http://127.0.0.1:${stack.services.operations.grpcPort}`));
    const shop = await createShopWithKey(stack, { overdraft_limit: "1000" });
    const merchantId = (await stack.services.operations.db.shop.findUniqueOrThrow({ where: { id: shop.shopId } })).merchantId;
    await sandbox.scenario({ method: "WT_RUB_C2C", accept: "accept", accept_delay_ms: 2500 });
    const body = { shopId: shop.shopId, merchantId, type: OperationType.PAYOUT, merchantOperationId: newMoid(), clientId: "c", method: "WT_RUB_C2C", amount: "10.00", currency: "RUB", number: "4111111111111111" };
    // No respond_by_unix_ms: only the call's deadline says when the caller stops waiting.
    const outcome = await operations.createOperation(body, { timeoutMs: 1500 }).then(() => "created", (err: { code?: number }) => err.code);
    expect([Code.DeadlineExceeded, Code.Unavailable]).toContain(outcome);
    // The create goes on at operations and undoes itself: its reserve is released, then its row goes.
    const reserves = await pollUntil(
      () => stack.services.ledger.sql.selectFrom("reserves").select(["operationId", "status"]).where("shopId", "=", shop.shopId).execute(),
      (rows) => rows.length === 1 && rows[0].status !== "held",
    );
    expect(reserves).toEqual([{ operationId: expect.any(String), status: "released" }]);
    const operationId = reserves[0].operationId;
    const row = () => stack.services.operations.sql.selectFrom("operations").select("status").where("id", "=", operationId).executeTakeFirst();
    expect(await pollUntil(row, (r) => r === undefined)).toBeUndefined();
    // The provider accepts the payout late, after the create gave up on it; nothing comes of that.
    const late = () => stack.sandbox.db.selectFrom("sandboxOperations").select("kind").where("operationId", "=", operationId).executeTakeFirst();
    expect(await pollUntil(late, (placed) => placed !== undefined)).toEqual({ kind: "payout" });
    expect(await row()).toBeUndefined();
    const lookup = await operations.getOperationState({ shopId: shop.shopId, ref: { ref: { case: "merchantOperationId", value: body.merchantOperationId } } }).then(() => "found", (err: { code?: number }) => err.code);
    expect(lookup).toBe(Code.NotFound);
    const rub = (await merchantClient(stack, shop.apiKey).get("/v1/balances")).body.balances.find((b: { currency: string }) => b.currency === "RUB");
    expect(rub.reserved).toBe("0.00");
  }, 20_000);

  it("answers a shop_id that is not a UUID or a missing type with InvalidArgument and an unknown operation id with NotFound on the gRPC API, not Internal", async () => {
    const operations = createClient(OperationsService, createPeerTransport(`http://127.0.0.1:${stack.services.operations.grpcPort}`));
    const codeOf = (call: Promise<unknown>) => call.then(() => "accepted", (err: { code?: number }) => err.code);
    const ref = { ref: { case: "merchantOperationId" as const, value: "m" } };
    for (const bad of ["", "x", "00000000-0000-0000-0000-00000000000Z"]) {
      expect(await codeOf(operations.createOperation({ shopId: bad, merchantId: "m", type: OperationType.PAYMENT, merchantOperationId: newMoid(), clientId: "c", method: "WT_RUB_C2C", amount: "10.00", currency: "RUB" }))).toBe(Code.InvalidArgument);
      expect(await codeOf(operations.getOperationState({ shopId: bad, ref }))).toBe(Code.InvalidArgument);
      expect(await codeOf(operations.cancelOperation({ shopId: bad, ref, reason: "" }))).toBe(Code.InvalidArgument);
    }
    expect(await codeOf(operations.listOperations({ shopId: "x" }))).toBe(Code.InvalidArgument);
    // No type is no operation (it used to become a payment).
    const before = await countOperations();
    for (const type of [OperationType.UNSPECIFIED, 99 as OperationType]) {
      expect(await codeOf(operations.createOperation({ shopId, merchantId: "m", type, merchantOperationId: newMoid(), clientId: "c", method: "WT_RUB_C2C", amount: "10.00", currency: "RUB" }))).toBe(Code.InvalidArgument);
    }
    expect(await countOperations()).toBe(before);
    expect(await codeOf(operations.applyReviewOutcome({ operationId: "x", outcome: "manual_check" }))).toBe(Code.NotFound);
  });

  it("answers a create for a shop that does not exist with NotFound and creates nothing, whether or not its caller has stopped waiting", async () => {
    const operations = createClient(OperationsService, createPeerTransport(`http://127.0.0.1:${stack.services.operations.grpcPort}`));
    const codeOf = (call: Promise<unknown>) => call.then(() => "accepted", (err: { code?: number }) => err.code);
    const before = await countOperations();
    const body = { shopId: randomUUID(), merchantId: randomUUID(), type: OperationType.PAYMENT, merchantOperationId: newMoid(), clientId: "c", method: "WT_RUB_C2C", amount: "10.00", currency: "RUB" };
    expect(await codeOf(operations.createOperation(body))).toBe(Code.NotFound);
    expect(await codeOf(operations.createOperation({ ...body, respondByUnixMs: BigInt(Date.now() - 1000) }))).toBe(Code.NotFound);
    expect(await codeOf(operations.createOperation({ ...body, shopId, respondByUnixMs: BigInt(Date.now() - 1000) }))).toBe(Code.Unavailable);
    expect(await countOperations()).toBe(before);
  });
});

describe("idempotency", () => {
  it("returns the original operation for the same body and 412 for another", async () => {
    const body = paymentBody();
    const first = await m.payment(body);
    const again = await m.payment(body);
    expect(again.status).toBe(200);
    expect(again.body.operation_id).toBe(first.body.operation_id);
    // The amount has one spelling: another is no repeat of the body but a bad request, refused before the key is looked at.
    expect((await m.payment({ ...body, amount: "1500" })).status).toBe(400);
    const other = await m.payment({ ...body, amount: "1501.00" });
    expect(other.status).toBe(412);
    expect(other.body.error.code).toBe("idempotency_conflict");
    const asPayout = await m.payout({ ...body, number: "4111111111111111" });
    expect(asPayout.status).toBe(412);
  });

  it("takes a merchant_operation_id of any length the body allows: a 57 kB key and one differing only in its last character are two operations, each found again (a 3 kB client_id too)", async () => {
    // Random CJK characters (3 bytes each): far beyond what a btree entry holds (about 2.7 kB), and incompressible.
    const cjk = (n: number) => Array.from({ length: n }, () => String.fromCodePoint(0x4e00 + Math.floor(Math.random() * 20_000))).join("");
    const key = cjk(19_000);
    const created = await m.payment(paymentBody({ merchant_operation_id: `${key}a` }));
    expect(created.status).toBe(200);
    const sibling = await m.payment(paymentBody({ merchant_operation_id: `${key}b`, client_id: cjk(1_000) }));
    expect(sibling.status).toBe(200);
    expect(sibling.body.operation_id).not.toBe(created.body.operation_id);
    expect((await m.payment(paymentBody({ merchant_operation_id: `${key}a` }))).body.operation_id).toBe(created.body.operation_id);
    expect((await m.payment(paymentBody({ merchant_operation_id: `${key}a`, client_id: "someone else" }))).status).toBe(412);
    expect((await m.state({ merchant_operation_id: `${key}a` })).body.operation_id).toBe(created.body.operation_id);
    expect((await m.state({ merchant_operation_id: `${key}b` })).body.operation_id).toBe(sibling.body.operation_id);
    expect((await m.cancel({ merchant_operation_id: `${key}b` })).body).toMatchObject({ outcome: "cancelled", operation: { operation_id: sibling.body.operation_id } });
  });

  it("takes an empty client_ip as none: created, and the same operation as without it", async () => {
    const without = paymentBody();
    const first = await m.payment({ ...without, client_ip: "" });
    expect(first.status).toBe(200);
    expect((await m.payment(without)).body.operation_id).toBe(first.body.operation_id);
  });

  it("lets a retry take over the key of a create that died mid-flight (still creating past its deadline) at once, instead of 503 until the sweep", async () => {
    const body = paymentBody();
    const input = { type: "payment" as const, merchantOperationId: body.merchant_operation_id, clientId: body.client_id, method: body.method, amount: body.amount, currency: body.currency };
    const merchantId = (await stack.services.operations.db.shop.findUniqueOrThrow({ where: { id: shopId } })).merchantId;
    const deadId = randomUUID();
    const db = new pg.Client({ connectionString: stack.databases.operations });
    await db.connect();
    try {
      // What a create leaves behind when its process is killed: its claim, 20 s old (the deadline here is 3 s).
      await db.query(
        `INSERT INTO operations (id, shop_id, merchant_id, merchant_operation_id, request_hash, type, status, method, currency, expected_amount, client_id, created_at, merchant_operation_key)
         VALUES ($1, $2, $3, $4, $5, 'payment', 'creating', $6, $7, $8, $9, now() - interval '20 seconds', $10)`,
        [deadId, shopId, merchantId, body.merchant_operation_id, requestHash(input), body.method, body.currency, body.amount, body.client_id, operationKeyHash(body.merchant_operation_id)],
      );
      const started = Date.now();
      const retried = await m.payment(body);
      expect(retried.status).toBe(200);
      expect(retried.body.status).toBe("pending");
      expect(retried.body.operation_id).not.toBe(deadId);
      expect(Date.now() - started).toBeLessThan(5000);
      expect((await db.query(`SELECT count(*)::int AS n FROM operations WHERE merchant_operation_id = $1`, [body.merchant_operation_id])).rows[0].n).toBe(1);
    } finally {
      await db.end();
    }
  });

  it("creates one operation for 50 concurrent duplicates and answers it to every caller", async () => {
    await sandbox.scenario({ method: "WT_RUB_C2C", accept: "accept", accept_delay_ms: 200 });
    const body = paymentBody();
    const results = await Promise.all(Array.from({ length: 50 }, () => m.payment(body)));
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(new Set(results.map((r) => r.body.operation_id)).size).toBe(1);
    expect(results.every((r) => r.body.number === results[0].body.number)).toBe(true);
    expect(await stack.services.operations.db.operation.count({ where: { merchantOperationId: body.merchant_operation_id } })).toBe(1);
  });

  it("does not hold the key when no provider accepted", async () => {
    await sandbox.scenario({ method: "WT_RUB_C2C", accept: "reject" });
    const body = paymentBody();
    const refused = await m.payment(body);
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe("no_provider_available");
    expect(refused.headers["retry-after"]).toBeDefined();
    expect((await m.state({ merchant_operation_id: body.merchant_operation_id })).status).toBe(404);
    await sandbox.reset();
    const retried = await m.payment(body);
    expect(retried.status).toBe(200);
    expect(retried.body.status).toBe("pending");
  });

  it("gives up on a provider that never answers within the create deadline", async () => {
    await sandbox.scenario({ method: "WT_RUB_C2C", accept: "timeout" });
    const started = Date.now();
    const res = await m.payment(paymentBody());
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("no_provider_available");
    expect(Date.now() - started).toBeLessThan(3000 + 1500);
  });
});

describe("get_operation_state", () => {
  it("reads by either identifier within the shop only", async () => {
    const created = (await m.payment(paymentBody())).body;
    const byId = await m.state({ operation_id: created.operation_id });
    const byMoid = await m.state({ merchant_operation_id: (await stack.services.operations.db.operation.findUniqueOrThrow({ where: { id: created.operation_id } })).merchantOperationId });
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual(byMoid.body);
    expect(byId.body).toMatchObject({ operation_id: created.operation_id, status: "pending", receipts: [], receipt_evidence_status: "not_ready" });
    const other = merchantClient(stack, (await createShopWithKey(stack)).apiKey);
    expect((await other.state({ operation_id: created.operation_id })).status).toBe(404);
  });

  it.each([[{}], [{ operation_id: "3f1b6a2c-0d6e-4c8a-9f1e-2b7c5d9e8a10", merchant_operation_id: "x" }], [{ operation_id: "not-a-uuid" }], [{ operation_id: 5 }]])("refuses %j with 400", async (body) => {
    const res = await m.state(body as never);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
  });

  it("answers 404 for an unknown operation", async () => {
    expect((await m.state({ operation_id: "3f1b6a2c-0d6e-4c8a-9f1e-2b7c5d9e8a10" })).status).toBe(404);
    expect((await m.state({ merchant_operation_id: "never-used" })).status).toBe(404);
  });
});

describe("provider updates", () => {
  it("completes a payment with the paid amount; a partial payment settles to what was captured", async () => {
    const full = (await m.payment(paymentBody({ amount: "1000.00" }))).body;
    expect((await sandbox.pay(full.operation_id, { amount: "1000.00" })).status).toBe(200);
    const done = await m.waitForStatus(full.operation_id, "completed");
    expect(done.body).toMatchObject({ status: "completed", actual_amount: "1000.00", recorded_amount: "1000.00", recorded_currency: "RUB" });

    const partial = (await m.payment(paymentBody({ amount: "1000.00" }))).body;
    await sandbox.pay(partial.operation_id, { amount: "400.00" });
    const settled = await m.waitForStatus(partial.operation_id, "completed");
    expect(settled.body).toMatchObject({ expected_amount: "1000.00", actual_amount: "400.00", recorded_amount: "400.00" });
    expect(Number(settled.body.settlement_amount)).toBeLessThan(400);
    expect(Number(settled.body.settlement_amount) + Number(settled.body.commission_amount)).toBeCloseTo(400, 2);
  });

  it("publishes each status change on its status's subject and keeps every one replayable for the consumers' reconciliation", async () => {
    // Consumers filter by subject (ledger: terminal.>, receipts: terminal.completed, routing:
    // terminal.cancelled), so a create's pending event reaches only the notifier.
    const nc = await connect({ servers: natsUrl() });
    // Every event of the stack, since the pending one may arrive before the create's answer does.
    const published: { operationId: string; subject: string }[] = [];
    const scope = `pgw.${stack.namespace}.`; // the stack's NATS_NAMESPACE (kit scopedSubject)
    const sub = nc.subscribe(`${scope}operation.status_changed.>`, {
      callback: (_err, msg) => void published.push({ operationId: fromBinary(OperationStatusChangedSchema, msg.data).operationId, subject: msg.subject.replace(scope, "pgw.") }),
    });
    const since = new Date(Date.now() - 1000).toISOString();
    const op = (await m.payment(paymentBody())).body;
    await sandbox.pay(op.operation_id, { amount: "1500.00" });
    await m.waitForStatus(op.operation_id, "completed");
    const seen = await pollUntil(async () => published.filter((e) => e.operationId === op.operation_id).map((e) => e.subject), (found) => found.length >= 2, 5000);
    sub.unsubscribe();
    await nc.close();
    expect(seen).toEqual(["pgw.operation.status_changed.nonterminal.pending", "pgw.operation.status_changed.terminal.completed"]);
    const operations = createClient(OperationsService, createPeerTransport(`http://127.0.0.1:${stack.services.operations.grpcPort}`));
    const replayable = await pollUntil(
      async () => (await operations.listStatusEvents({ since, limit: 5000 })).events.map((e) => fromBinary(OperationStatusChangedSchema, e.payload)).filter((e) => e.operationId === op.operation_id),
      (found) => found.length >= 2,
      5000,
    );
    expect(replayable.map((e) => e.status)).toEqual(["pending", "completed"]);
    // A replayed completion carries the provider's evidence legs as the live one did.
    expect(replayable[1].providerEvidence?.legs.map((l) => l.amount)).toEqual(["1500.00"]);
  });

  it("completes a payment in USDT: the provider's amount is booked at USDT's 6 places, never rounded to 2", async () => {
    const op = (await m.payment(paymentBody({ currency: "USDT", amount: "10.00" }))).body;
    expect(op).toMatchObject({ status: "pending", currency: "USDT", expected_amount: "10.00", actual_amount: "0.000000" });
    await sandbox.pay(op.operation_id, { amount: "9.125" });
    expect((await m.waitForStatus(op.operation_id, "completed")).body).toMatchObject({ status: "completed", expected_amount: "10.00", actual_amount: "9.125000" });
  });

  it("drops a provider completion with no amount to book (none, zero, more places than RUB holds) instead of booking the expected amount, and books the next one", async () => {
    const op = (await m.payment(paymentBody({ amount: "10.00" }))).body;
    let sequence = 0;
    const update = (actualAmount: string | undefined) => {
      const event = providerUpdateEvent({ operationId: op.operation_id, status: "completed", actualAmount, occurredAt: new Date().toISOString(), sequence: ++sequence });
      return stack.services.routing.sql.$transaction((tx) => enqueueEvent(tx, event.subject, event.payload, event.id));
    };
    // Dropped updates still take their place in the operation's order, so the fourth need not wait for them.
    for (const unbookable of [undefined, "0.00", "9.505"]) await update(unbookable);
    await update("9.500000");
    expect((await m.waitForStatus(op.operation_id, "completed")).body).toMatchObject({ status: "completed", actual_amount: "9.50" });
  });

  it("declines and expires", async () => {
    const a = (await m.payment(paymentBody())).body;
    const b = (await m.payment(paymentBody())).body;
    await sandbox.decline(a.operation_id);
    await sandbox.expire(b.operation_id);
    expect(Number(a.settlement_amount)).toBeGreaterThan(0); // the expected figure while pending
    expect((await m.waitForStatus(a.operation_id, "declined")).body).toMatchObject({ status: "declined", ...NOTHING_CAPTURED_RUB });
    expect((await m.waitForStatus(b.operation_id, "expired")).body).toMatchObject({ status: "expired", ...NOTHING_CAPTURED_RUB });
  });

  it("settles a payout asynchronously", async () => {
    const p = (await m.payout(cardPayout({ amount: "250.00" }))).body;
    await sandbox.settle(p.operation_id);
    const done = await m.waitForStatus(p.operation_id, "completed");
    expect(done.body).toMatchObject({ type: "payout", actual_amount: "250.00", recorded_amount: "250.00" });
  });
});

describe("a completion settles with the tariff its create was quoted with", () => {
  const ledgerClient = () => createClient(LedgerService, createPeerTransport(`http://127.0.0.1:${stack.services.ledger.grpcPort}`));
  /** Quotes the ledger served (any replica): a completion asks for none. */
  const quotesServed = () => metricTotal(stack.replicas.ledger.map((r) => r.healthPort), "grpc_server_handling_seconds_count", { method: "pgw.ledger.v1.LedgerService/Quote" });
  type Op = Record<string, string>;
  /** What the ledger's Quote answers for the captured amount, as a completion asked it before. */
  const quotedFigures = async (shop: string, op: Op) => {
    const q = await ledgerClient().quote({ shopId: shop, type: op.type, method: op.method, amount: op.actual_amount, currency: op.currency, settlementCurrency: op.settlement_currency, fxRate: op.fx_rate });
    return { commission_amount: q.commissionAmount, settlement_amount: q.settlementAmount, recorded_amount: q.recordedAmount, recorded_currency: q.settlementCurrency };
  };
  /** Completes `op` at the sandbox and answers it completed, with the Quotes the ledger served meanwhile. */
  const completeCounting = async (client: ReturnType<typeof merchantClient>, op: Op, complete: () => Promise<unknown>) => {
    const before = await quotesServed();
    await complete();
    const done = (await client.waitForStatus(op.operation_id, "completed")).body as Op;
    return { done, quotes: (await quotesServed()) - before };
  };

  it.each([
    ["a payment, captured short", "payment", "1000.00", "RUB", "400.00"],
    ["a payout", "payout", "250.00", "RUB", undefined],
    ["a payment converted to USDT", "payment", "1000.00", "USDT", "1000.00"],
    ["a payout converted to USDT", "payout", "250.00", "USDT", undefined],
  ])("%s: the figures the ledger's Quote gives, and no Quote asked", async (_name, type, amount, settlementCurrency, paid) => {
    const shop = settlementCurrency === "RUB" ? { shopId, apiKey } : await createShopWithKey(stack, { settlement_currency: settlementCurrency, overdraft_limit: "100000000" });
    const client = merchantClient(stack, shop.apiKey);
    const created = (await (type === "payment" ? client.payment(paymentBody({ amount })) : client.payout(cardPayout({ amount })))).body as Op;
    expect(created).toMatchObject({ status: "pending", settlement_currency: settlementCurrency });
    const { done, quotes } = await completeCounting(client, created, () => (paid ? sandbox.pay(created.operation_id, { amount: paid }) : sandbox.settle(created.operation_id)));
    expect(quotes).toBe(0);
    expect(done).toMatchObject(await quotedFigures(shop.shopId, done));
  });

  it("keeps an operation's tariff when the shop's tariff changes before its completion; the ledger books those figures, balanced", async () => {
    const shop = await createShopWithKey(stack, { overdraft_limit: "100000000" });
    const client = merchantClient(stack, shop.apiKey);
    const payment = (await client.payment(paymentBody({ amount: "1000.00" }))).body as Op;
    const payout = (await client.payout(cardPayout({ amount: "1000.00" }))).body as Op;
    // The defaults (payment 2.5 %, payout 1.5 %) quoted the creates.
    expect([payment.commission_amount, payout.commission_amount]).toEqual(["25.00", "15.00"]);

    // The shop gets tariffs of its own, by SQL as tariffs change; the ledger's Quote soon applies them.
    const own = (type: string, percent: string) => ({ id: randomUUID(), shopId: shop.shopId, type, method: "WT_RUB_C2C", currency: "RUB", percent, fixed: "1", minimum: "0" });
    await stack.services.ledger.sql.insertInto("tariffs").values([own("payment", "10"), own("payout", "7")]).execute();
    const quoteNow = (type: string) => ledgerClient().quote({ shopId: shop.shopId, type, method: "WT_RUB_C2C", amount: "1000.00", currency: "RUB", settlementCurrency: "RUB" });
    expect((await pollUntil(() => quoteNow("payment"), (q) => q.commissionAmount === "101.00", 5000)).appliedTariff).toMatchObject({ percent: "10", fixed: "1" });
    expect((await quoteNow("payout")).commissionAmount).toBe("71.00");

    const paid = await completeCounting(client, payment, () => sandbox.pay(payment.operation_id, { amount: "1000.00" }));
    const settled = await completeCounting(client, payout, () => sandbox.settle(payout.operation_id));
    expect([paid.quotes, settled.quotes]).toEqual([0, 0]);
    expect(paid.done).toMatchObject({ commission_amount: "25.00", settlement_amount: "975.00", recorded_amount: "1000.00" });
    expect(settled.done).toMatchObject({ commission_amount: "15.00", settlement_amount: "1015.00", recorded_amount: "1000.00" });

    // The ledger posts exactly those figures: credited 975.00, charged 1015.00, nothing else.
    const postings = async () => (await ledgerClient().listShopPostings({ shopId: shop.shopId, currency: "RUB", limit: 50 })).postings;
    const booked = await pollUntil(postings, (p) => p.some((e) => e.kind === "payment_completed") && p.some((e) => e.kind === "payout_completed"), 10_000);
    const moved = (kind: string, account: string) => booked.filter((e) => e.kind === kind && e.account === account).map((e) => e.amount);
    expect(moved("payment_completed", "available")).toEqual(["975.00"]);
    // The payout's reserve (made at create) is consumed whole: its completion books the create's figures.
    expect(moved("reserve", "available")).toEqual(["-1015.00"]);
    expect(moved("payout_completed", "reserved")).toEqual(["-1015.00"]);
    expect(moved("payout_completed", "available")).toEqual([]);
    expect((await ledgerClient().getBalances({ shopId: shop.shopId })).balances).toContainEqual(expect.objectContaining({ currency: "RUB", balance: "-40.00", reserved: "0.00" }));
    expect(await journalViolations(stack.services.ledger.sql)).toEqual(NO_VIOLATIONS);
  });
});

describe("a payment create quotes with the tariff operations keeps", () => {
  const ledgerClient = () => createClient(LedgerService, createPeerTransport(`http://127.0.0.1:${stack.services.ledger.grpcPort}`));
  const quotesServed = () => metricTotal(stack.replicas.ledger.map((r) => r.healthPort), "grpc_server_handling_seconds_count", { method: "pgw.ledger.v1.LedgerService/Quote" });
  type Op = Record<string, string>;

  it("asks the ledger's Quote about once per operations replica for a shop, answers the figures Quote gives, and applies a changed tariff after the ledger's signal", async () => {
    const shop = await createShopWithKey(stack);
    const client = merchantClient(stack, shop.apiKey);
    const create = async (amount: string) => (await client.payment(paymentBody({ amount }))).body as Op;
    const figures = (op: Op) => ({ commission_amount: op.commission_amount, settlement_amount: op.settlement_amount });
    const quoted = async (amount: string) => {
      const q = await ledgerClient().quote({ shopId: shop.shopId, type: "payment", method: "WT_RUB_C2C", amount, currency: "RUB", settlementCurrency: "RUB" });
      return { commission_amount: q.commissionAmount, settlement_amount: q.settlementAmount };
    };

    const before = await quotesServed();
    const amounts = ["1000.00", "1234.56", "250.10", "999.99", "5000.00", "1500.50"];
    const created: Op[] = [];
    for (const amount of amounts) created.push(await create(amount));
    const asked = (await quotesServed()) - before;
    // Each operations replica asks once for the shop, method and currency, then applies the tariff itself.
    expect(asked).toBeGreaterThanOrEqual(1);
    expect(asked).toBeLessThanOrEqual(stack.replicas.operations.length);
    for (const [i, op] of created.entries()) expect(figures(op)).toEqual(await quoted(amounts[i]));
    expect(figures(created[1])).toEqual({ commission_amount: "30.86", settlement_amount: "1203.70" });

    // A tariff of the shop's own, by SQL as tariffs change: creates apply it once the ledger signalled.
    await stack.services.ledger.sql
      .insertInto("tariffs")
      .values({ id: randomUUID(), shopId: shop.shopId, type: "payment", method: "WT_RUB_C2C", currency: "RUB", percent: "10", fixed: "1", minimum: "0" })
      .execute();
    const changed = await pollUntil(() => create("1000.00"), (op) => op.commission_amount === "101.00", 10_000);
    expect(figures(changed)).toEqual({ commission_amount: "101.00", settlement_amount: "899.00" });
  });

  it("converts with the rate routing chose, to the settlement currency's scale, as Quote does", async () => {
    const shop = await createShopWithKey(stack, { settlement_currency: "USDT" });
    const client = merchantClient(stack, shop.apiKey);
    const converted: Op[] = [];
    for (const amount of ["1000.00", "777.77", "12345.67", "100.01"]) converted.push((await client.payment(paymentBody({ amount }))).body as Op);
    for (const op of converted) {
      const q = await ledgerClient().quote({ shopId: shop.shopId, type: "payment", method: "WT_RUB_C2C", amount: op.expected_amount, currency: "RUB", settlementCurrency: "USDT", fxRate: op.fx_rate });
      expect({ commission_amount: op.commission_amount, settlement_amount: op.settlement_amount, settlement_currency: op.settlement_currency }).toEqual({ commission_amount: q.commissionAmount, settlement_amount: q.settlementAmount, settlement_currency: "USDT" });
      expect(op.settlement_amount).toMatch(/^\d+\.\d{6}$/);
    }
  });
});

describe("cancel_operation", () => {
  it("cancels a pending payment once; repeats answer the same decision", async () => {
    const op = (await m.payment(paymentBody())).body;
    const first = await m.cancel({ operation_id: op.operation_id, reason: "customer left" });
    expect(first.status).toBe(200);
    expect(first.body.outcome).toBe("cancelled");
    expect(first.body.operation).toMatchObject({ operation_id: op.operation_id, type: "payment", status: "cancelled" });
    expect((await m.state({ operation_id: op.operation_id })).body).toMatchObject(NOTHING_CAPTURED_RUB);
    const repeat = await m.cancel({ operation_id: op.operation_id });
    expect(repeat.body.outcome).toBe("cancelled");
    const audit = await stack.services.operations.db.cancellation.findMany({ where: { operationId: op.operation_id } });
    expect(audit.map((a) => a.reason)).toEqual(["customer left"]);
    // That it can never complete, whatever the provider reports: late-funds.test.ts.
  });

  it("answers already_terminal for a completed payment and changes nothing", async () => {
    const op = (await m.payment(paymentBody())).body;
    await sandbox.pay(op.operation_id, { amount: "1500.00" });
    await m.waitForStatus(op.operation_id, "completed");
    const res = await m.cancel({ operation_id: op.operation_id, reason: "" });
    expect(res.body).toMatchObject({ outcome: "already_terminal", operation: { status: "completed" } });
    const audit = await stack.services.operations.db.cancellation.findMany({ where: { operationId: op.operation_id } });
    expect(audit.map((a) => [a.reason, a.outcome])).toEqual([["cancel", "already_terminal"]]);
  });

  it("refuses payouts with 412 and bad requests with 400, unknown and foreign operations with 404", async () => {
    const payout = (await m.payout(cardPayout())).body;
    const refused = await m.cancel({ operation_id: payout.operation_id });
    expect(refused.status).toBe(412);
    expect(refused.body.error.code).toBe("invalid_state");
    expect((await m.cancel({})).status).toBe(400);
    expect((await m.cancel({ operation_id: "x" })).status).toBe(400);
    expect((await m.cancel({ operation_id: payout.operation_id, merchant_operation_id: "y" })).status).toBe(400);
    const op = (await m.payment(paymentBody())).body;
    expect((await m.cancel({ merchant_operation_id: "never-created" })).status).toBe(404);
    const other = merchantClient(stack, (await createShopWithKey(stack)).apiKey);
    expect((await other.cancel({ operation_id: op.operation_id })).status).toBe(404);
  });

  it("takes a reason of exactly 2048 bytes and refuses one of 2049 with 400 naming reason, changing nothing: UTF-8 bytes count, not characters", async () => {
    const op = (await m.payment(paymentBody())).body;
    const atLimit = "я".repeat(1024); // 1,024 characters of 2 bytes each
    expect(Buffer.byteLength(atLimit, "utf8")).toBe(2048);
    const cancellations = () => stack.services.operations.db.cancellation.findMany({ where: { operationId: op.operation_id } });

    const refused = await m.cancel({ operation_id: op.operation_id, reason: `${atLimit}.` }); // 1,025 characters, 2,049 bytes
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "validation_error", details: [{ field: "reason", issue: "must be at most 2048 bytes" }] });
    expect((await m.state({ operation_id: op.operation_id })).body.status).toBe("pending");
    expect(await cancellations()).toEqual([]);

    const accepted = await m.cancel({ operation_id: op.operation_id, reason: atLimit });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ outcome: "cancelled", operation: { operation_id: op.operation_id, status: "cancelled" } });
    expect((await cancellations()).map((c) => c.reason)).toEqual([atLimit]);
  });

  it("answers 503 when the decision cannot be made durable before the deadline, and decides on retry", async () => {
    const op = (await m.payment(paymentBody())).body;
    // Another transaction holds the operation's row lock for longer than the cancel deadline.
    let locked!: () => void;
    const lockTaken = new Promise<void>((r) => (locked = r));
    const holder = stack.services.operations.sql.$transaction(
      async (tx) => {
        await tx.selectFrom("operations").select("id").where("id", "=", op.operation_id).forUpdate().execute();
        locked();
        await new Promise((r) => setTimeout(r, 2500)); // the scenario: the lock outlasts the cancel's 1 s deadline
      },
      { timeout: 5000 },
    );
    await Promise.race([lockTaken, holder]);
    const blocked = await m.cancel({ operation_id: op.operation_id });
    expect(blocked.status).toBe(503);
    expect(blocked.body.error.code).toBe("unavailable");
    await holder;
    expect((await m.state({ operation_id: op.operation_id })).body.status).toBe("pending");
    expect((await m.cancel({ operation_id: op.operation_id })).body.outcome).toBe("cancelled");
  });

  it("lets a cancel by merchant_operation_id win over an in-flight create, which then shows no details, ever", async () => {
    await sandbox.scenario({ method: "WT_RUB_C2C", accept: "accept", accept_delay_ms: 400 });
    const body = paymentBody();
    const creating = m.payment(body);
    // The cancel comes once the create has claimed the key, while the provider still holds it (400 ms).
    const claimed = await pollUntil(
      () => stack.services.operations.sql.selectFrom("operations").select("status").where("shopId", "=", shopId).where("merchantOperationId", "=", body.merchant_operation_id).executeTakeFirst(),
      (row) => row !== undefined,
      5000,
      10,
    );
    expect(claimed).toEqual({ status: "creating" });
    const cancel = await m.cancel({ merchant_operation_id: body.merchant_operation_id });
    expect(cancel.body.outcome).toBe("cancelled");
    const created = await creating;
    expect(created.status).toBe(200);
    expect(created.body.status).toBe("cancelled");
    for (const detail of ["number", "name", "bankname", "bankname_details"]) expect(created.body).not.toHaveProperty(detail);
    const later = await m.state({ merchant_operation_id: body.merchant_operation_id });
    expect(later.body).toMatchObject({ status: "cancelled", ...NOTHING_CAPTURED_RUB });
    expect(later.body).not.toHaveProperty("number");
    // The allocation made at the provider is released.
    const allocation = await waitForAllocationStatus(created.body.operation_id, "released");
    expect(allocation).toBe("released");
  });
});

const waitForAllocationStatus = (operationId: string, status: string) =>
  pollUntil(
    async () => (await stack.services.routing.sql.selectFrom("allocations").select("status").where("operationId", "=", operationId).executeTakeFirst())?.status,
    (current) => current === status,
    5000,
  );

describe("admin overview API", () => {
  it("lists a shop's balances, its operations by status (the manual-check queue) and the routes", async () => {
    const shop = await createShopWithKey(stack);
    const client = merchantClient(stack, shop.apiKey);
    const pending = (await client.payment(paymentBody())).body;
    const done = (await client.payment(paymentBody())).body;
    await sandbox.pay(done.operation_id, { amount: "1500.00" });
    await client.waitForStatus(done.operation_id, "completed");

    await client.waitForBalance("RUB", done.settlement_amount);
    const balances = await admin(stack, "GET", `/admin/api/shops/${shop.shopId}/balances`);
    expect(balances.status).toBe(200);
    expect(balances.body.balances.find((b: { currency: string }) => b.currency === "RUB").balance).toBe(done.settlement_amount);

    const all = await admin(stack, "GET", `/admin/api/operations?shop_id=${shop.shopId}`);
    expect(all.body.items.map((o: { operation_id: string }) => o.operation_id).sort()).toEqual([pending.operation_id, done.operation_id].sort());
    const completed = await admin(stack, "GET", `/admin/api/operations?shop_id=${shop.shopId}&status=completed`);
    expect(completed.body.items).toEqual([expect.objectContaining({ operation_id: done.operation_id, status: "completed", shop_id: shop.shopId })]);
    expect((await admin(stack, "GET", `/admin/api/operations?status=nonsense`)).status).toBe(400);
    // Card numbers reach the console masked (a payout's destination, a payment's requisites); the
    // merchant's own API keeps them whole.
    expect(pending.number).toMatch(/^\d{16}$/);
    const listedPayment = all.body.items.find((o: { operation_id: string }) => o.operation_id === pending.operation_id);
    expect(listedPayment.number).toBe(`${pending.number.slice(0, 6)}******${pending.number.slice(-4)}`);
    expect((await admin(stack, "POST", `/admin/api/shops/${shop.shopId}/adjustments`, { currency: "RUB", amount: "100.00", reason: "funding" })).status).toBe(201);
    const payout = (await client.payout(cardPayout({ amount: "10.00" }))).body;
    expect(payout.number).toBe("4111111111111111");
    const listed = (await admin(stack, "GET", `/admin/api/operations?shop_id=${shop.shopId}`)).body.items.find((o: { operation_id: string }) => o.operation_id === payout.operation_id);
    expect(listed.number).toBe("411111******1111");
    expect(JSON.stringify((await admin(stack, "GET", `/admin/api/operations?shop_id=${shop.shopId}`)).body)).not.toContain("4111111111111111");

    const routes = await admin(stack, "GET", "/admin/api/routes");
    expect(routes.body.routes).toContainEqual(expect.objectContaining({ type: "payment", method: "WT_RUB_C2C", currency: "RUB", settlement_currency: "RUB", enabled: true }));
    expect(JSON.stringify(routes.body)).not.toMatch(/provider/);
    expect((await admin(stack, "GET", "/admin/api/shops/00000000-0000-4000-8000-000000000000/balances")).status).toBe(404);
  });
});

describe("auto-conversion", () => {
  it("quotes fx from the moment the route is chosen and records the ledger fact only once money moved", async () => {
    const usdtShop = await createShopWithKey(stack, { settlement_currency: "USDT" });
    const client = merchantClient(stack, usdtShop.apiKey);
    const nc = await connect({ servers: natsUrl() });
    const events: OperationStatusChanged[] = [];
    nc.subscribe(`pgw.${stack.namespace}.operation.status_changed.nonterminal.pending`, { callback: (_err, msg) => void events.push(fromBinary(OperationStatusChangedSchema, msg.data)) });
    await nc.flush();
    const pending = (await client.payment(paymentBody({ amount: "1000.00" }))).body;
    expect(pending).toMatchObject({ status: "pending", currency: "RUB", settlement_currency: "USDT", fx_source: expect.any(String) });
    // The create writes its event in the statement that stores the row, from the row as it will be
    // stored: the event's operation is the stored one to the last field (fx rate, 6-place figures),
    // but for the card number, which no event carries.
    const event = await pollUntil(async () => events.find((e) => e.operationId === pending.operation_id), (found) => found !== undefined, 5000);
    await nc.close();
    const operations = createClient(OperationsService, createPeerTransport(`http://127.0.0.1:${stack.services.operations.grpcPort}`));
    const stored = (await operations.getOperationState({ shopId: usdtShop.shopId, ref: { ref: { case: "operationId", value: pending.operation_id } } })).operation!;
    expect(stored.number).toMatch(/^\d{16}$/);
    expect(toJson(OperationSchema, event!.operation!)).toEqual(toJson(OperationSchema, { ...stored, number: undefined }));
    expect(pending.fx_rate).toMatch(/^\d+\.\d{1,10}$/);
    expect(pending.settlement_amount).toMatch(/^\d+\.\d{6}$/);
    expect(pending).not.toHaveProperty("recorded_amount");
    expect(pending).not.toHaveProperty("recorded_currency");

    await sandbox.pay(pending.operation_id, { amount: "1000.00" });
    const done = (await client.waitForStatus(pending.operation_id, "completed")).body;
    // recorded = actual × rate, half-even at USDT's 6 places; credited + commission = recorded, exactly.
    expect(done).toMatchObject({ recorded_currency: "USDT", fx_rate: pending.fx_rate, recorded_amount: formatAmount(new Money(pending.fx_rate).times("1000.00"), "USDT") });
    expect(formatAmount(new Money(done.settlement_amount).plus(done.commission_amount), "USDT")).toBe(done.recorded_amount);
    expect((await client.waitForBalance("USDT", done.settlement_amount))?.balance).toBe(done.settlement_amount);
  });

  it("runs a payout with auto-conversion on one quote, though the rate changes while it is reserved: the reserve, the fx_rate shown and the booking at completion agree, as do balances and the webhook", async () => {
    const receiver = await startReceiver();
    const fxRates = stack.services.routing.db.fxRate;
    const pair = { baseCurrency: "RUB", quoteCurrency: "USDT" };
    const [quoted] = await fxRates.findMany({ where: pair });
    const ledgerDb = new pg.Client({ connectionString: stack.databases.ledger });
    await ledgerDb.connect();
    try {
      const usdtShop = await createShopWithKey(stack, { settlement_currency: "USDT", webhook_url: receiver.url });
      receiver.secrets = [usdtShop.webhookSecret];
      const client = merchantClient(stack, usdtShop.apiKey);
      expect((await admin(stack, "POST", `/admin/api/shops/${usdtShop.shopId}/adjustments`, { currency: "USDT", amount: "100.00", reason: "prefunding" })).status).toBe(201);

      // The shop's USDT account is held here, so the payout's reserve (made at the rate quoted before
      // it) waits; meanwhile the rate changes. Routing, placing the payout after the reserve, must
      // carry the reserve's quote rather than read the new rate.
      await ledgerDb.query("BEGIN");
      await ledgerDb.query("SELECT 1 FROM accounts WHERE shop_id = $1 FOR UPDATE", [usdtShop.shopId]);
      const creating = client.payout(cardPayout({ amount: "1000.00" }));
      const waitingForLocks = async () => (await ledgerDb.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n as number;
      expect(await pollUntil(waitingForLocks, (n) => n > 0)).toBeGreaterThan(0);
      await fxRates.update({ where: { id: quoted.id }, data: { rate: "0.02" } });
      await ledgerDb.query("COMMIT");

      const pending = (await creating).body;
      expect(pending).toMatchObject({ type: "payout", status: "pending", currency: "RUB", expected_amount: "1000.00", actual_amount: "0.00", settlement_currency: "USDT", fx_source: quoted.source });
      expect(pending.fx_rate).toBe(new Money(quoted.rate.toString()).toFixed()); // the rate quoted before the reserve
      expect(pending).not.toHaveProperty("recorded_amount");
      expect(pending).not.toHaveProperty("recorded_currency");
      // What the shown rate gives: recorded = amount × rate and the 1.5 % commission, each half-even at USDT's 6 places.
      const recorded = formatAmount(new Money(pending.fx_rate).times("1000.00"), "USDT");
      const commission = formatAmount(new Money(recorded).times("0.015"), "USDT");
      const charged = formatAmount(new Money(recorded).plus(commission), "USDT");
      expect(pending).toMatchObject({ settlement_amount: charged, commission_amount: commission });
      // The reserve was made at that same rate.
      const left = formatAmount(new Money("100").minus(charged), "USDT");
      expect(await client.waitForBalance("USDT", left)).toEqual({ currency: "USDT", balance: left, reserved: charged, current_minus: "0.000000" });

      await sandbox.settle(pending.operation_id);
      const done = (await client.waitForStatus(pending.operation_id, "completed")).body;
      expect(done).toMatchObject({ actual_amount: "1000.00", fx_rate: pending.fx_rate, fx_source: pending.fx_source, recorded_currency: "USDT", recorded_amount: recorded, settlement_amount: charged, commission_amount: commission });
      expect(await pollUntil(async () => (await client.get("/v1/balances")).body.balances.find((b: { currency: string }) => b.currency === "USDT"), (row) => row.reserved === "0.000000")).toEqual({
        currency: "USDT",
        balance: left,
        reserved: "0.000000",
        current_minus: "0.000000",
      });

      const [hook] = await pollUntil(async () => receiver.verified.filter((r) => r.json.data.operation_id === pending.operation_id), (hooks) => hooks.length > 0, 15_000);
      expect(hook.json).toMatchObject({ type: "operation.completed", data: { status: "completed", actual_amount: "1000.00", fx_rate: pending.fx_rate, recorded_amount: recorded, settlement_amount: charged } });
    } finally {
      await ledgerDb.query("ROLLBACK").catch(() => undefined); // a transaction left open by a failed step
      await ledgerDb.end();
      await fxRates.update({ where: { id: quoted.id }, data: { rate: quoted.rate } });
      await receiver.close();
    }
  });
});
