/**
 * Secrets and card numbers sealed at rest (docs/architecture.md, Secrets and card numbers): after a
 * system run with known card numbers (payouts to cards and a phone, a payment whose requisites are
 * a card), a webhook secret rotated and provider callbacks, no database of ours (every table, the
 * outbox included) and no message of the NATS stream holds any of them in clear. Then the data key
 * is rotated the documented way while the stack serves, and everything still reads.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { parseDataKeys } from "@pgw/kit/db";
import { connectNats, STREAM_NAME } from "@pgw/kit/events";
import { createLogger } from "@pgw/kit/runtime";
import { OperationStatusChangedSchema } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { randomBytes, randomInt } from "node:crypto";
import pg from "pg";
import { startNotifier } from "../services/notifier/src/main";
import { SEALED_COLUMNS as NOTIFIER_SEALED } from "../services/notifier/src/store";
import { waitFor } from "../services/notifier/test/support/harness";
import { startReceiver, type Receiver } from "../services/notifier/test/support/receiver";
import { startOperations } from "../services/operations/src/main";
import { SEALED_COLUMNS as OPERATIONS_SEALED } from "../services/operations/src/store";
import { startRouting } from "../services/routing/src/main";
import { SEALED_COLUMNS as ROUTING_SEALED } from "../services/routing/src/store";
import { natsUrl } from "./support/infra";
import { merchantClient, newMoid, sandboxControl } from "./support/merchant";
import { admin, createShopWithKey, startStack, type Stack } from "./support/stack";

const [OLD_KEY, NEW_KEY] = [randomBytes(32).toString("base64"), randomBytes(32).toString("base64")];
const BOTH_KEYS = `old:${OLD_KEY},new:${NEW_KEY}`;
const CALLBACK_SECRET = `callback-${randomBytes(12).toString("hex")}`;
/** Our units with a database; the provider sandbox stands for the provider, whose records are its own. */
const UNITS = ["operations", "routing", "ledger", "receipts", "notifier"] as const;
const SEALING = { operations: OPERATIONS_SEALED, routing: ROUTING_SEALED, notifier: NOTIFIER_SEALED };

/** A Luhn-valid 16-digit card number with random digits after `prefix`. */
function cardNumber(prefix: string): string {
  let digits = prefix;
  while (digits.length < 15) digits += String(randomInt(10));
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    const d = Number(digits[14 - i]) * (i % 2 === 0 ? 2 : 1);
    sum += d > 9 ? d - 9 : d;
  }
  return digits + String((10 - (sum % 10)) % 10);
}
const grouped = (card: string) => card.replace(/(\d{4})(?=\d)/g, "$1 ");

/** The needles found in `haystack`, as text or as the hex of their bytes (how a bytea column reads as JSON). */
const found = (haystack: string, needles: string[]) => needles.filter((n) => haystack.includes(n) || haystack.includes(Buffer.from(n).toString("hex")));

/** Every row of every table of a database, each as JSON text. */
async function dumpOf(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(`SELECT quote_ident(table_name) AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`);
    const rows: string[] = [];
    for (const { name } of tables.rows) rows.push(...(await client.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM ${name} t`)).rows.map((r) => r.row));
    return rows.join("\n");
  } finally {
    await client.end();
  }
}

/** Every sealed value of a unit (its SEALED_COLUMNS). */
async function sealedValues(url: string, unit: keyof typeof SEALING): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const values: string[] = [];
    for (const { table, column } of SEALING[unit]) values.push(...(await client.query(`SELECT "${column}" AS v FROM "${table}" WHERE "${column}" IS NOT NULL`)).rows.map((r) => r.v as string));
    return values;
  } finally {
    await client.end();
  }
}

/** Every message the stack published on the stream (its namespace's subjects), read back through JetStream. */
async function streamMessages(stack: Stack): Promise<{ subject: string; data: Buffer }[]> {
  const nc = await connectNats(natsUrl(), "test-stream-reader", createLogger("test", "silent"), {}, () => undefined);
  try {
    const consumer = await nc.jetstream().consumers.get(STREAM_NAME, { filterSubjects: `pgw.${stack.namespace}.>` });
    const messages: { subject: string; data: Buffer }[] = [];
    for (let m = await consumer.next({ expires: 2000 }); m; m = await consumer.next({ expires: 2000 })) messages.push({ subject: m.subject, data: Buffer.from(m.data) });
    return messages;
  } finally {
    await nc.close();
  }
}

let stack: Stack;
let receiver: Receiver;
const keysEnv = { DATA_KEYS: BOTH_KEYS, DATA_KEY_ID: "old" };

beforeAll(async () => {
  // Rotation step 1 is done: every unit holds the new key beside the active old one.
  stack = await startStack({
    env: { operations: keysEnv, notifier: keysEnv, routing: { ...keysEnv, SANDBOX_CALLBACK_SECRET: CALLBACK_SECRET }, "provider-sandbox": { CALLBACK_SECRET } },
  });
  receiver = await startReceiver();
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

it("keeps no card number or secret in clear in any database or the NATS stream, and rotates the data key while serving", async () => {
  const shop = await createShopWithKey(stack, { webhook_url: receiver.url });
  const rotated = await admin(stack, "POST", `/admin/api/shops/${shop.shopId}/webhook-secret`);
  expect(rotated.status).toBe(201);
  const secrets = [shop.webhookSecret, rotated.body.secret as string];
  receiver.secrets = secrets;
  expect((await admin(stack, "POST", `/admin/api/shops/${shop.shopId}/adjustments`, { currency: "RUB", amount: "10000.00", reason: "funding" })).status).toBe(201);
  const m = merchantClient(stack, shop.apiKey);
  const sandbox = sandboxControl(stack);

  // Payouts to two cards (one sent in groups) and to a phone; a payment whose requisites are a card.
  const [settledCard, declinedCard] = [cardNumber("4276"), cardNumber("5536")];
  const phone = `+79${String(randomInt(1e8)).padStart(8, "0")}1`;
  const payoutBody = { merchant_operation_id: newMoid("seal"), client_id: "c1", method: "WT_RUB_C2C", amount: "100.00", currency: "RUB", number: grouped(settledCard) };
  const settled = (await m.payout(payoutBody)).body;
  const declined = (await m.payout({ ...payoutBody, merchant_operation_id: newMoid("seal"), number: declinedCard })).body;
  const toPhone = (await m.payout({ ...payoutBody, merchant_operation_id: newMoid("seal"), method: "WT_RUB_PHONE", number: phone, bankname: "sberbank" })).body;
  const payment = (await m.payment({ merchant_operation_id: newMoid("seal"), client_id: "c1", method: "WT_RUB_C2C", amount: "1500.00", currency: "RUB" })).body;
  expect([settled.number, declined.number, toPhone.number]).toEqual([settledCard, declinedCard, phone]);
  expect(payment.number).toMatch(/^\d{16}$/);
  const cards = [settledCard, declinedCard, payment.number as string];

  // Idempotency still compares the request as sent, its hash sealed.
  expect((await m.payout(payoutBody)).body.operation_id).toBe(settled.operation_id);
  expect((await m.payout({ ...payoutBody, number: settledCard })).status).toBe(412);

  // Provider callbacks end them; each webhook body is what the API shows, card number whole, signed with both secrets.
  expect((await sandbox.settle(settled.operation_id)).status).toBe(200);
  expect((await sandbox.decline(declined.operation_id)).status).toBe(200);
  expect((await sandbox.settle(toPhone.operation_id)).status).toBe(200);
  expect((await sandbox.pay(payment.operation_id, { amount: "1500.00" })).status).toBe(200);
  const ids = [settled.operation_id, declined.operation_id, toPhone.operation_id, payment.operation_id];
  await waitFor(() => ids.every((id) => receiver.verified.some((w) => w.json.data.operation_id === id)), 20_000, "the four webhooks");
  for (const [id, number] of [
    [settled.operation_id, settledCard],
    [declined.operation_id, declinedCard],
    [toPhone.operation_id, phone],
    [payment.operation_id, payment.number],
  ]) {
    const hook = receiver.verified.find((w) => w.json.data.operation_id === id)!;
    expect({ id, number: hook.json.data.number, signedWith: hook.verifiedWith.sort() }).toEqual({ id, number, signedWith: [...secrets].sort() });
  }

  // The admin API shows card numbers by their first six and last four digits.
  const listed = JSON.stringify((await admin(stack, "GET", `/admin/api/operations?shop_id=${shop.shopId}`)).body);
  expect(found(listed, cards)).toEqual([]);
  for (const card of cards) expect(listed).toContain(`${card.slice(0, 6)}******${card.slice(-4)}`);

  // Nothing of ours holds them in clear.
  const needles = [...cards, grouped(settledCard), phone, ...secrets, CALLBACK_SECRET];
  for (const unit of UNITS) expect({ unit, found: found(await dumpOf(stack.databases[unit]), needles) }).toEqual({ unit, found: [] });
  const messages = await streamMessages(stack);
  expect(messages.filter((msg) => msg.subject.includes(".operation.status_changed.")).length).toBeGreaterThanOrEqual(8);
  expect(messages.filter((msg) => msg.subject.endsWith(".routing.provider_update")).length).toBeGreaterThanOrEqual(4);
  expect(found(messages.map((msg) => msg.data.toString("latin1")).join("\n"), needles)).toEqual([]);
  // Status events carry the number sealed under the data key, as operations stores it: what the notifier opens.
  const statusEvents = messages.filter((msg) => msg.subject.includes(".operation.status_changed.")).map((msg) => fromBinary(OperationStatusChangedSchema, msg.data));
  const completedPayment = statusEvents.find((e) => e.operationId === payment.operation_id && e.status === "completed")!;
  expect(completedPayment.sealedNumber).toMatch(/^v1:old:/);
  expect(parseDataKeys(BOTH_KEYS, "old").open(completedPayment.sealedNumber)).toBe(payment.number);
  // The search finds what is there: the provider's own records hold the destinations, and an
  // operation id is in operations' outbox payloads (bytea).
  expect(found(await dumpOf(stack.databases["provider-sandbox"]), [settledCard])).toEqual([settledCard]);
  expect(await dumpOf(stack.databases.operations)).toContain(Buffer.from(payment.operation_id).toString("hex"));
  expect(messages.some((msg) => msg.data.includes(payment.operation_id))).toBe(true);

  // Rotation steps 2 and 3: the new key active, every unit re-sealed once (DATA_RESEAL=only) while
  // the stack keeps serving with both keys.
  for (const unit of ["operations", "routing", "notifier"] as const) expect((await sealedValues(stack.databases[unit], unit)).some((v) => v.startsWith("v1:old:"))).toBe(true);
  const resealEnv = (unit: string) => ({ DATABASE_URL: stack.databases[unit], LOCAL_MODE: "true", GRPC_PORT: "0", HEALTH_PORT: "0", LOG_LEVEL: "silent", DATA_KEYS: BOTH_KEYS, DATA_KEY_ID: "new", DATA_RESEAL: "only" });
  for (const start of [() => startOperations(resealEnv("operations")), () => startRouting(resealEnv("routing")), () => startNotifier(resealEnv("notifier"))]) {
    const pass = await start();
    expect(pass.completed).toBe(true);
    await pass.stop();
  }
  // Step 4 would drop the old key: the new one alone opens every value.
  const newOnly = parseDataKeys(`new:${NEW_KEY}`, undefined);
  for (const unit of ["operations", "routing", "notifier"] as const) {
    const values = await sealedValues(stack.databases[unit], unit);
    expect(values.length).toBeGreaterThan(0);
    for (const v of values) expect(() => newOnly.open(v)).not.toThrow();
  }
  for (const unit of UNITS) expect({ unit, found: found(await dumpOf(stack.databases[unit]), needles) }).toEqual({ unit, found: [] });
  expect((await m.state({ operation_id: settled.operation_id })).body.number).toBe(settledCard);
  const delivery = (await admin(stack, "GET", `/admin/api/shops/${shop.shopId}/webhook-deliveries`)).body.deliveries.find((d: { operation_id: string }) => d.operation_id === payment.operation_id);
  const first = receiver.verified.find((w) => w.json.data.operation_id === payment.operation_id)!;
  expect((await admin(stack, "POST", `/admin/api/webhook-deliveries/${delivery.id}/redeliver`)).status).toBe(200);
  const again = await waitFor(() => receiver.verified.filter((w) => w.webhookId === first.webhookId)[1], 10_000, "the redelivery");
  // The same body, but for its receipt links, which each attempt signs anew.
  const withoutLinks = (body: any) => ({ ...body, data: { ...body.data, receipts: body.data.receipts.map(({ receipt_url: _url, ...item }: any) => item) } });
  expect(withoutLinks(again.json)).toEqual(withoutLinks(first.json));
  expect(again.verifiedWith.sort()).toEqual([...secrets].sort());
}, 120_000);
