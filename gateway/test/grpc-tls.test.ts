/**
 * The whole system with mutual TLS between its units (GRPC_TLS_*): every gRPC hop of a payment, from
 * create to the merchant's webhook with receipt evidence, runs over TLS, and a unit's port refuses a
 * caller without a certificate of the internal CA.
 */
import { createClient } from "@connectrpc/connect";
import { createPeerTransport, fromConnectError, loadGrpcTls } from "@pgw/kit";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { randomUUID } from "node:crypto";
import { waitFor } from "../../services/notifier/test/support/harness";
import { startReceiver, type Receiver } from "../../services/notifier/test/support/receiver";
import { merchantClient, newMoid, sandboxControl } from "../../test/support/merchant";
import { throwawayPki } from "../../test/support/pki";
import { createShopWithKey, startStack, type Stack } from "../../test/support/stack";

const pki = throwawayPki();
let stack: Stack;
let receiver: Receiver;

beforeAll(async () => {
  pki.make("pgw");
  const tls = pki.env("pgw");
  stack = await startStack({ env: Object.fromEntries(["gateway", "operations", "routing", "ledger", "receipts", "notifier"].map((unit) => [unit, tls])) });
  receiver = await startReceiver();
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
  pki.remove();
});

test("a payment goes from create to its completed webhook with receipt evidence over TLS between units", async () => {
  const shop = await createShopWithKey(stack, { webhook_url: receiver.url });
  receiver.secrets = [shop.webhookSecret];
  const m = merchantClient(stack, shop.apiKey);
  const created = await m.payment({ merchant_operation_id: newMoid("tls"), client_id: "client-1", method: "WT_RUB_C2C", amount: "1500.00", currency: "RUB" });
  expect(created.status).toBe(200);
  const id = created.body.operation_id;
  expect((await sandboxControl(stack).pay(id, { amount: "1500.00" })).status).toBe(200);
  const hooks = await waitFor(() => {
    const found = receiver.verified.filter((r) => r.json.data.operation_id === id);
    return found.length ? found : null;
  }, 15_000, "the completed webhook");
  // The evidence in the webhook came from the notifier's call to receipts.
  expect(hooks[0].json.data).toMatchObject({ status: "completed", actual_amount: "1500.00", receipt_evidence_status: "complete" });
  expect(await m.waitForBalance("RUB", (await m.state({ operation_id: id })).body.settlement_amount)).toBeDefined();
});

test("a unit's gRPC port refuses a caller without a certificate of the internal CA", async () => {
  const url = `http://127.0.0.1:${stack.services.ledger.grpcPort}`;
  const plaintext = createClient(LedgerService, createPeerTransport(url, { timeoutMs: 2000 }));
  expect(fromConnectError(await plaintext.getBalances({ shopId: randomUUID() }).catch((e: unknown) => e)).code).toBe("unavailable");
  const withCertificate = createClient(LedgerService, createPeerTransport(url, { timeoutMs: 5000, tls: loadGrpcTls(pki.env("pgw")) }));
  expect((await withCertificate.getBalances({ shopId: randomUUID() })).balances.length).toBeGreaterThan(0);
});
