/**
 * The whole system with mutual TLS between its units (GRPC_TLS_*), each with its own certificate from
 * deploy/pki/dev-certs.sh: every gRPC hop of a payment, from create to the merchant's webhook with
 * receipt evidence, runs over TLS; a unit's port refuses a caller without a certificate of the
 * internal CA at the handshake, and answers a method only to the callers it names (rpc-access.ts):
 * another unit's certificate gets permission_denied, an internal team's reads and what it is granted.
 */
import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { maskCardNumber } from "@pgw/contracts";
import { createPeerTransport, fromConnectError, loadGrpcTls } from "@pgw/kit/rpc";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { AccountsService } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import { OperationsService } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
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
  pki.make("pgw", ["risk", "finance"]);
  const env: Record<string, Record<string, string>> = Object.fromEntries(["gateway", "operations", "routing", "ledger", "receipts", "notifier"].map((unit) => [unit, pki.env(unit)]));
  env.ledger = { ...env.ledger, RPC_TEAM_GRANTS: "finance=pgw.ledger.v1.LedgerService/Adjust" };
  stack = await startStack({ env });
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
  const withCertificate = createClient(LedgerService, createPeerTransport(url, { timeoutMs: 5000, tls: loadGrpcTls(pki.env("gateway")) }));
  expect((await withCertificate.getBalances({ shopId: randomUUID() })).balances.length).toBeGreaterThan(0);
});

/** A client of `service` on `unit`'s port, presenting `holder`'s certificate (a unit, or team-<team>). */
const clientAs = <S extends DescService>(service: S, unit: keyof Stack["services"], holder: string) =>
  createClient(service, createPeerTransport(`http://127.0.0.1:${stack.services[unit].grpcPort}`, { timeoutMs: 5000, tls: loadGrpcTls(pki.env(holder)) }));
const refusal = (call: Promise<unknown>) =>
  call.then(
    () => "answered",
    (err: unknown) => Code[ConnectError.from(err).code],
  );

test("a unit's certificate cannot call what its unit may not: credit a shop, approve a payment, mint another shop's key", async () => {
  const shop = await createShopWithKey(stack);
  const payment = await merchantClient(stack, shop.apiKey).payment({ merchant_operation_id: newMoid("tls"), client_id: "client-1", method: "WT_RUB_C2C", amount: "700.00", currency: "RUB" });
  const operationId = payment.body.operation_id;
  const adjust = { shopId: shop.shopId, currency: "RUB", amount: "1000.00", reason: "forged", actor: "receipts", idempotencyKey: randomUUID() };
  expect(await refusal(clientAs(LedgerService, "ledger", "receipts").adjust(adjust))).toBe("PermissionDenied");
  expect(await refusal(clientAs(OperationsService, "operations", "notifier").resolveManualCheck({ operationId, decision: "approve", actualAmount: "700.00", actor: "notifier", reason: "forged" }))).toBe("PermissionDenied");
  expect(await refusal(clientAs(AccountsService, "operations", "ledger").issueApiKey({ shopId: shop.shopId, label: "stolen" }))).toBe("PermissionDenied");
  // Nothing moved: no credit, the payment still pending, the shop's only key the one it had.
  const m = merchantClient(stack, shop.apiKey);
  const { balances } = await clientAs(LedgerService, "ledger", "gateway").getBalances({ shopId: shop.shopId });
  expect(balances.find((b) => b.currency === "RUB")?.balance).toBe("0.00");
  expect((await m.state({ operation_id: operationId })).body.status).toBe("pending");
  expect((await clientAs(AccountsService, "operations", "gateway").listApiKeys({ shopId: shop.shopId })).apiKeys).toHaveLength(1);
});

test("an internal team reads operations with the card number masked, and changes only what RPC_TEAM_GRANTS grants it", async () => {
  const shop = await createShopWithKey(stack);
  const created = await merchantClient(stack, shop.apiKey).payment({ merchant_operation_id: newMoid("team"), client_id: "client-1", method: "WT_RUB_C2C", amount: "800.00", currency: "RUB" });
  expect(created.body.number).toMatch(/^\d{16}$/);
  const ref = { ref: { case: "operationId" as const, value: created.body.operation_id } };
  const seen = await clientAs(OperationsService, "operations", "team-risk").getOperationState({ shopId: shop.shopId, ref });
  expect(seen.operation?.number).toBe(maskCardNumber(created.body.number));
  expect(seen.operation?.number).not.toBe(created.body.number);
  // The notifier, which builds webhooks, still reads it whole.
  expect((await clientAs(OperationsService, "operations", "notifier").getOperationState({ shopId: shop.shopId, ref })).operation?.number).toBe(created.body.number);

  const adjust = (holder: string) => clientAs(LedgerService, "ledger", holder).adjust({ shopId: shop.shopId, currency: "RUB", amount: "5.00", reason: "team test", actor: holder, idempotencyKey: randomUUID() });
  expect(await refusal(adjust("team-risk"))).toBe("PermissionDenied");
  expect(await refusal(clientAs(OperationsService, "operations", "team-risk").cancelOperation({ shopId: shop.shopId, ref }))).toBe("PermissionDenied");
  expect(await refusal(adjust("team-finance"))).toBe("answered");
  expect((await merchantClient(stack, shop.apiKey).waitForBalance("RUB", "5.00"))?.balance).toBe("5.00");
});
