/**
 * One payment is one trace: its create (gateway → operations → routing), the provider call, the
 * provider's callback, the ledger's booking and the webhook, across RPC headers, outbox rows and
 * NATS messages. Tracing is registered here before the stack starts, with an in-memory exporter,
 * as the units' `--require` entry does in production.
 */
import { SpanKind } from "@pgw/kit/runtime";
import { recordSpans, type ReadableSpan, type RecordedSpans } from "@pgw/kit/testing";
import { waitFor } from "../services/notifier/test/support/harness";
import { startReceiver, type Receiver } from "../services/notifier/test/support/receiver";
import { merchantClient, newMoid, sandboxControl } from "./support/merchant";
import { createShopWithKey, startStack, type Stack } from "./support/stack";

let recorded: RecordedSpans;
let stack: Stack;
let receiver: Receiver;

beforeAll(async () => {
  recorded = recordSpans();
  stack = await startStack();
  receiver = await startReceiver();
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
  await recorded?.stop();
});

/** The span's ancestors in `spans`, nearest first, as far as they were recorded. */
function ancestors(span: ReadableSpan, spans: ReadableSpan[]): ReadableSpan[] {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const chain: ReadableSpan[] = [];
  for (let parent = byId.get(span.parentSpanContext?.spanId ?? ""); parent; parent = byId.get(parent.parentSpanContext?.spanId ?? "")) chain.push(parent);
  return chain;
}

it("follows a payment from its create to its webhook in one trace", async () => {
  const shop = await createShopWithKey(stack, { webhook_url: receiver.url });
  receiver.secrets = [shop.webhookSecret];
  const m = merchantClient(stack, shop.apiKey);
  const created = await m.payment({ merchant_operation_id: newMoid("trace"), client_id: "client-1", method: "WT_RUB_C2C", amount: "1500.00", currency: "RUB" });
  expect(created.status).toBe(200);
  const id: string = created.body.operation_id;
  expect((await sandboxControl(stack).pay(id, { amount: "1500.00" })).status).toBe(200);
  await waitFor(() => receiver.verified.find((r) => r.json.data.operation_id === id && r.json.type === "operation.completed"), 15_000, "the completed webhook");

  // The webhook's span ends once the attempt is recorded, just after the receiver answered.
  const webhookSpan = (spans: ReadableSpan[]) => spans.find((s) => s.name === "webhook delivery" && ancestors(s, spans).some((a) => a.attributes["pgw.operation_id"] === id));
  const spans = await waitFor(() => (webhookSpan(recorded.spans()) ? recorded.spans() : null), 10_000, "the webhook's span");

  const create = spans.find((s) => s.name === "pgw.operations.v1.OperationsService/CreateOperation" && s.kind === SpanKind.SERVER && s.attributes["pgw.operation_id"] === id);
  expect(create).toBeDefined();
  const traceId = create!.spanContext().traceId;
  const inTrace = spans.filter((s) => s.spanContext().traceId === traceId);
  const descendsFromCreate = (s: ReadableSpan) => ancestors(s, inTrace).includes(create!);

  const providerCall = inTrace.find((s) => s.kind === SpanKind.CLIENT && String(s.attributes["url.full"] ?? "").startsWith(stack.sandboxUrl));
  const callback = inTrace.find((s) => s.name === "provider callback");
  const booking = inTrace.find((s) => s.kind === SpanKind.CONSUMER && String(s.attributes["messaging.consumer.group.name"]).endsWith("ledger-status"));
  const webhook = webhookSpan(inTrace);
  expect({ providerCall: providerCall?.name, callback: callback?.name, booking: booking?.name, webhook: webhook?.name }).toEqual({
    providerCall: expect.any(String),
    callback: "provider callback",
    booking: expect.stringMatching(/status_changed\.terminal\.completed process$/),
    webhook: "webhook delivery",
  });
  // One tree, not spans that merely share an id: each hangs from the create.
  for (const span of [providerCall!, callback!, booking!, webhook!]) expect(descendsFromCreate(span)).toBe(true);
}, 60_000);
