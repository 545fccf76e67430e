/**
 * Receipts through the public API: confirm_payment uploads and their review, manual-check
 * resolution in the admin API, receipt evidence in get_operation_state, signed receipt links and
 * the hosted checkout page. The whole stack runs in process (test/support/stack.ts); receipts are
 * real PDFs made with pdf-lib (services/receipts/test/receipt-pdfs.ts).
 */
import { Code, createClient } from "@connectrpc/connect";
import { hmacHex } from "@pgw/contracts";
import { createPeerTransport } from "@pgw/kit/rpc";
import { ReceiptsService } from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";
import { actionReceiptPdf, bombReceiptPdf, encryptedBombPdf, JPEG_HEAD, NOT_A_PDF, PNG_1X1, receiptPdf, tamperedReceiptPdf } from "../../services/receipts/test/receipt-pdfs";
import { sampleMemory } from "../../services/receipts/test/memory";
import { freePortsForLater, UNITS } from "../../deploy/local/src";
import { buildUnit } from "../../scripts/build-units";
import { spawn } from "node:child_process";
import { ADMIN_TOKEN, admin, createShopWithKey, startStack, type Stack } from "../../test/support/stack";
import { escapeHtml } from "../src/http/escape-html";
import { pollUntil } from "../../test/support/poll";
import { natsUrl } from "../../test/support/infra";
import { startReceipts } from "../../services/receipts/src/main";
import { STATUS_DURABLE as LEDGER_DURABLE } from "../../services/ledger/src/events";
import { waitFor } from "../../services/notifier/test/support/harness";
import { startReceiver } from "../../services/notifier/test/support/receiver";
import { consumerCaughtUp } from "../../test/support/consumers";
import { metricValue } from "../../test/support/metrics";
import { cpSync, mkdtempSync, promises as fs, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";

const RECEIPT_METHOD = "WT_RUB_C2C"; // scenario: requires a receipt; evidence mode varies per test
const PLAIN_METHOD = "WT_RUB_PHONE"; // scenario: the default (no receipt)
const DEV_LINK_SECRET = "local-dev-receipt-url-secret"; // receipts' LOCAL_MODE default
const MiB = 1024 * 1024;

let stack: Stack;
/** The gateway's TMPDIR: where multipart uploads are spooled while their request lasts. */
const uploads = mkdtempSync(path.join(os.tmpdir(), "pgw-test-uploads-"));
let shop: Awaited<ReturnType<typeof createShopWithKey>>;
let otherShop: Awaited<ReturnType<typeof createShopWithKey>>;

beforeAll(async () => {
  stack = await startStack({ env: { gateway: { TMPDIR: uploads } } });
  shop = await createShopWithKey(stack, { checkout_enabled: true });
  otherShop = await createShopWithKey(stack);
  await receiptScenario("complete");
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  rmSync(uploads, { recursive: true, force: true });
});

// ---- helpers ---------------------------------------------------------------------------------

async function json(res: Response) {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

async function sandbox(method: string, path: string, body?: unknown) {
  const res = await fetch(`${stack.sandboxUrl}${path}`, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const parsed = await json(res);
  if (res.status >= 300) throw new Error(`sandbox ${method} ${path}: ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

const receiptScenario = (evidence: "complete" | "legacy" | "unavailable") => sandbox("PUT", "/control/scenario", { method: RECEIPT_METHOD, accept: "accept", requires_receipt: true, evidence });

async function api(path: string, body: unknown, apiKey = shop.apiKey) {
  const res = await fetch(stack.publicUrl + path, { method: "POST", headers: { "x-api-key": apiKey, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, body: await json(res) };
}

let seq = 0;
/** Creates a payment; `amount` as a decimal string (docs/api.md, Amounts). */
async function createPayment(method: string, amount: string, apiKey = shop.apiKey, path = "/v1/payment") {
  const merchantOperationId = `rcpt-${Date.now()}-${++seq}`;
  const res = await api(path, { merchant_operation_id: merchantOperationId, client_id: "payer-1", method, amount, currency: "RUB" }, apiKey);
  expect(res.status).toBe(200);
  return { ...res.body, merchant_operation_id: merchantOperationId } as Record<string, any>;
}

/** A payment waiting for its receipt. */
async function awaitingPayment(amount = "1500.00", apiKey = shop.apiKey) {
  const op = await createPayment(RECEIPT_METHOD, amount, apiKey);
  expect(op.status).toBe("awaiting_confirmation");
  expect(op.number).toEqual(expect.any(String));
  return op;
}

interface Part {
  name: string;
  value: string | Buffer;
  filename?: string;
  type?: string;
}

/** A multipart POST (confirm_payment or the checkout form). */
async function multipart(path: string, parts: Part[], headers: Record<string, string> = { "x-api-key": shop.apiKey }) {
  const form = new FormData();
  for (const p of parts) {
    if (typeof p.value === "string" && p.filename === undefined) form.append(p.name, p.value);
    else form.append(p.name, new Blob([p.value], { type: p.type ?? "application/octet-stream" }), p.filename ?? "file");
  }
  const res = await fetch(stack.publicUrl + path, { method: "POST", headers, body: form, redirect: "manual" });
  return { status: res.status, headers: res.headers, body: await json(res) };
}

/** POST /v1/confirm_payment with a receipt file. */
function confirm(operationId: string, file: Buffer, type = "application/pdf", filename = "receipt.pdf", apiKey = shop.apiKey) {
  return multipart(
    "/v1/confirm_payment",
    [
      { name: "operation_id", value: operationId },
      { name: "confirmation_type", value: "receipt" },
      { name: "receipt", value: file, filename, type },
    ],
    { "x-api-key": apiKey },
  );
}

const stateById = (id: string, apiKey = shop.apiKey) => api("/v1/get_operation_state", { operation_id: id }, apiKey);
const stateByMoid = (moid: string, apiKey = shop.apiKey) => api("/v1/get_operation_state", { merchant_operation_id: moid }, apiKey);

/** Polls `check` until it holds (10 s at most). */
async function until(check: () => Promise<boolean>, timeoutMs = 10_000) {
  if (!(await pollUntil(check, Boolean, timeoutMs, 100))) throw new Error("condition not reached in time");
}

/** A receipt matching `op` (amount and destination). */
const genuineFor = (op: Record<string, any>, amount = op.expected_amount) => receiptPdf({ amount: `${amount} RUB`, recipient: op.number });

const resolve = (id: string, body: unknown, actor?: string) =>
  fetch(`${stack.adminUrl}/admin/api/operations/${id}/resolve`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json", ...(actor ? { "x-admin-actor": actor } : {}) },
    body: JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, body: await json(res) }));

const byCompletedThenId = (a: { completed_at: string; id: string }, b: { completed_at: string; id: string }) =>
  a.completed_at < b.completed_at ? -1 : a.completed_at > b.completed_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

const sum = (items: { amount: number }[]) => items.reduce((acc, i) => acc + Math.round(i.amount * 100), 0) / 100;

// ---- confirm_payment: review outcomes ------------------------------------------------------------

describe("POST /v1/confirm_payment: review outcomes", () => {
  it("completes a genuine receipt (amount and destination match) once the provider has the money", async () => {
    const op = await awaitingPayment("1500.00");
    const pdf = await genuineFor(op);
    // The payer pays, then uploads the receipt; the review asks the provider (CheckFunds: arrived).
    await sandbox("POST", `/control/operations/${op.operation_id}/pay`, { amount: "1500.00" });
    const res = await confirm(op.operation_id, pdf);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ operation_id: op.operation_id, status: "completed", actual_amount: "1500.00", expected_amount: "1500.00" });
    expect(res.body).not.toHaveProperty("manual_check_reason");
    expect(res.body.receipt_evidence_status).toBe("complete");
    expect(sum(res.body.receipts)).toBe(1500);
    const read = await stateById(op.operation_id);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ status: "completed", actual_amount: "1500.00" });
  });

  it("sends a genuine receipt to manual_check not_terminal when the provider says the money arrived without saying how much", async () => {
    const op = await awaitingPayment("1500.00");
    // A provider that reports the payment paid but names no amount (the sandbox's own pay always names one).
    const unnamed = await stack.sandbox.db.updateTable("sandboxOperations").set({ status: "paid", paidAmount: null }).where("operationId", "=", op.operation_id).executeTakeFirst();
    expect(unnamed.numUpdatedRows).toBe(1n);
    const res = await confirm(op.operation_id, await genuineFor(op));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "manual_check", manual_check_reason: "not_terminal", actual_amount: "0.00" });
    const recorded = await stack.services.receipts.sql.selectFrom("confirmations").selectAll().where("operationId", "=", op.operation_id).executeTakeFirst();
    expect(recorded).toMatchObject({ outcome: "manual_check", manualCheckReason: "not_terminal" });
  });

  it("reviews one of several uploads sent at once for an operation; the others are 412 before their files are stored or parsed", async () => {
    const op = await awaitingPayment("1500.00");
    await sandbox("POST", `/control/operations/${op.operation_id}/pay`, { amount: "1500.00" });
    const pdf = await genuineFor(op);
    const answers = await Promise.all(Array.from({ length: 5 }, () => confirm(op.operation_id, pdf)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 412, 412, 412, 412]);
    expect(answers.find((a) => a.status === 200)!.body).toMatchObject({ status: "completed", actual_amount: "1500.00" });
    expect(await stack.services.receipts.sql.selectFrom("confirmations").select("id").where("operationId", "=", op.operation_id).execute()).toHaveLength(1);
  });

  it("refuses an upload while another receipts replica reviews one for the same operation", async () => {
    const grpc = (port: number) => `http://127.0.0.1:${port}`;
    const { operations, routing, ledger } = stack.services;
    const replica = await startReceipts({
      DATABASE_URL: stack.databases.receipts,
      NATS_URL: natsUrl(),
      NATS_NAMESPACE: stack.namespace,
      GRPC_PORT: "0",
      HEALTH_PORT: "0",
      LOG_LEVEL: "silent",
      LOCAL_MODE: "true",
      DB_POOL_SIZE: "2",
      OPERATIONS_URL: grpc(operations.grpcPort),
      ROUTING_URL: grpc(routing.grpcPort),
      LEDGER_URL: grpc(ledger.grpcPort),
      PUBLIC_BASE_URL: stack.publicUrl,
    });
    try {
      const op = await awaitingPayment("1500.00");
      await sandbox("POST", `/control/operations/${op.operation_id}/pay`, { amount: "1500.00" });
      const pdf = await genuineFor(op);
      const other = createClient(ReceiptsService, createPeerTransport(grpc(replica.grpcPort)));
      const viaReplica = () =>
        other
          .uploadConfirmation({ shopId: shop.shopId, operationId: op.operation_id, confirmationType: "receipt", content: pdf, contentType: "application/pdf", filename: "r.pdf" })
          .then(() => 200, (err: { code: Code }) => (err.code === Code.FailedPrecondition ? 412 : err.code));
      const viaGateway = () => confirm(op.operation_id, pdf).then((res) => res.status);
      const answers = await Promise.all([viaGateway(), viaReplica(), viaGateway(), viaReplica()]);
      expect(answers.sort()).toEqual([200, 412, 412, 412]);
      expect(await stack.services.receipts.sql.selectFrom("confirmations").select("id").where("operationId", "=", op.operation_id).execute()).toHaveLength(1);
    } finally {
      await replica.stop();
    }
  });

  it("applies nothing when the review outlasts the caller's deadline: the upload the caller saw fail did fail", async () => {
    const op = await awaitingPayment("1500.00");
    await sandbox("POST", `/control/operations/${op.operation_id}/pay`, { amount: "1500.00" });
    const receipts = createClient(ReceiptsService, createPeerTransport(`http://127.0.0.1:${stack.services.receipts.grpcPort}`));
    // Uploads the service has finished handling, whatever the code (its own metric): once this one has, it applied what it was going to.
    const ended = () => metricValue(stack.services.receipts.healthPort, "grpc_server_handling_seconds_count", { method: "pgw.receipts.v1.ReceiptsService/UploadConfirmation" });
    const endedBefore = await ended();
    // Reading a PDF (measuring its streams, then parsing it in a process of its own) takes longer than this caller waits.
    const call = receipts.uploadConfirmation(
      { shopId: shop.shopId, operationId: op.operation_id, confirmationType: "receipt", content: await genuineFor(op), contentType: "application/pdf", filename: "r.pdf" },
      { timeoutMs: 30 },
    );
    await expect(call).rejects.toMatchObject({ code: Code.DeadlineExceeded });
    // The review ends on the service's side: the call ends there too, recorded but not applied.
    // Its bound is the service's own deadlines (operations 5 s, parse 10 s, provider 5 s), not the caller's.
    expect(await pollUntil(ended, (n) => n > endedBefore, 40_000)).toBe(endedBefore + 1);
    const recorded = await stack.services.receipts.sql.selectFrom("confirmations").selectAll().where("operationId", "=", op.operation_id).execute();
    expect(recorded).toEqual([expect.objectContaining({ outcome: "completed", appliedAt: null })]);
    expect((await stateById(op.operation_id)).body.status).toBe("awaiting_confirmation");
    // The payer's retry is reviewed anew and completes.
    expect((await confirm(op.operation_id, await genuineFor(op))).body).toMatchObject({ status: "completed", actual_amount: "1500.00" });
  });

  it("sends a tampered receipt (incremental update rewriting the amount) to manual_check potential_fake", async () => {
    const op = await awaitingPayment("1500.00");
    // Originally a receipt for 150.00; an editor appended a revision that shows the expected 1500.00.
    const pdf = await tamperedReceiptPdf({ amount: "150.00 RUB", recipient: op.number }, "1500.00 RUB");
    const res = await confirm(op.operation_id, pdf);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "manual_check", manual_check_reason: "potential_fake", actual_amount: "0.00" });
    expect(res.body).toMatchObject({ receipts: [], receipt_evidence_status: "not_ready" });
    // The upload is stored and its review recorded with the findings, for the reviewer.
    const [recorded] = await stack.services.receipts.sql.selectFrom("confirmations").selectAll().where("operationId", "=", op.operation_id).execute();
    expect(recorded).toMatchObject({ outcome: "manual_check", manualCheckReason: "potential_fake", contentType: "application/pdf", appliedAt: expect.any(Date) });
    expect(JSON.parse(recorded.findings).map((x: { code: string }) => x.code)).toContain("incremental_update");
    const file = await stack.services.receipts.sql.selectFrom("storedFiles").selectAll().where("id", "=", recorded.fileId).executeTakeFirst();
    expect(Buffer.from(file!.content).equals(pdf)).toBe(true);
  });

  it.each<[string, string, string, (op: Record<string, any>) => Promise<Buffer>]>([
    ["a receipt for the wrong amount", "potential_fake", "1500.00", (op) => genuineFor(op, "1 400,00")],
    ["a receipt naming another recipient", "potential_fake", "1500.00", () => receiptPdf({ amount: "1500.00 RUB", recipient: "5555555555554444" })],
    ["a genuine receipt while the provider has not seen the money", "not_terminal", "700.00", (op) => genuineFor(op)],
  ])("sends %s to manual_check %s", async (_name, reason, amount, pdfFor) => {
    const op = await awaitingPayment(amount);
    const res = await confirm(op.operation_id, await pdfFor(op));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "manual_check", manual_check_reason: reason });
  });

  it("declines a receipt that does not match when the provider says the money never came; a matching one goes to a human", async () => {
    const forged = await awaitingPayment("1500.00");
    await sandbox("POST", `/control/operations/${forged.operation_id}/decline`);
    const res = await confirm(forged.operation_id, await genuineFor(forged, "150.00"));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "declined", actual_amount: "0.00" });
    expect(res.body).not.toHaveProperty("manual_check_reason");

    const clean = await awaitingPayment("1500.00");
    await sandbox("POST", `/control/operations/${clean.operation_id}/decline`);
    expect((await confirm(clean.operation_id, await genuineFor(clean))).body).toMatchObject({ status: "manual_check", manual_check_reason: "potential_fake" });
  });

  it("ends a payment awaiting its receipt as expired when the provider's requisites lapse unpaid; a late upload is 412", async () => {
    const op = await awaitingPayment();
    await sandbox("POST", `/control/operations/${op.operation_id}/expire`);
    await until(async () => (await stateById(op.operation_id)).body.status === "expired");
    expect((await stateById(op.operation_id)).body).toMatchObject({ actual_amount: "0.00", settlement_amount: "0.00", receipts: [] });
    const late = await confirm(op.operation_id, await genuineFor(op));
    expect(late.status).toBe(412);
    expect(late.body.error.code).toBe("invalid_state");
  });

  it("sends a receipt PDF cut short (a broken download) to manual_check not_terminal: unreadable is never a fraud signal", async () => {
    const op = await awaitingPayment();
    const cut = (await genuineFor(op)).subarray(0, 700);
    const res = await confirm(op.operation_id, cut);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "manual_check", manual_check_reason: "not_terminal" });
  });

  it("sends a PNG or JPEG to manual_check not_terminal (never a fraud signal)", async () => {
    const png = await awaitingPayment();
    const res = await confirm(png.operation_id, PNG_1X1, "image/png", "receipt.png");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "manual_check", manual_check_reason: "not_terminal" });
    const jpeg = await awaitingPayment();
    // Declared as a PDF, but the bytes are a JPEG: the bytes decide.
    expect((await confirm(jpeg.operation_id, JPEG_HEAD, "application/pdf", "receipt.pdf")).body).toMatchObject({ status: "manual_check", manual_check_reason: "not_terminal" });
  });
});

// ---- hostile PDFs ---------------------------------------------------------------------------------

/**
 * A receipts replica as production runs it: its bundle (`pnpm build`) on plain Node, in a process
 * of its own, on the stack's database.
 */
async function receiptsProcess() {
  const image = mkdtempSync(path.join(os.tmpdir(), "pgw-receipts-"));
  const unit = path.join(image, "services", "receipts");
  await buildUnit(UNITS.find((u) => u.name === "receipts")!, path.join(unit, "dist"));
  cpSync(path.join(__dirname, "..", "..", "services", "receipts", "prisma"), path.join(unit, "prisma"), { recursive: true });
  const [grpcPort, healthPort] = await freePortsForLater(2);
  const grpc = (port: number) => `http://127.0.0.1:${port}`;
  const env = {
    DATABASE_URL: stack.databases.receipts,
    NATS_URL: natsUrl(),
    NATS_NAMESPACE: stack.namespace,
    GRPC_PORT: String(grpcPort),
    HEALTH_PORT: String(healthPort),
    LOG_LEVEL: "silent",
    LOCAL_MODE: "true",
    DB_POOL_SIZE: "2",
    OPERATIONS_URL: grpc(stack.services.operations.grpcPort),
    ROUTING_URL: grpc(stack.services.routing.grpcPort),
    PUBLIC_BASE_URL: stack.publicUrl,
  };
  const child = spawn(process.execPath, [path.join(unit, "dist", "main.js")], { env, stdio: "ignore" });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const stop = async () => {
    child.kill("SIGTERM");
    await exited;
    rmSync(image, { recursive: true, force: true });
  };
  const ready = await pollUntil(() => fetch(`${grpc(healthPort)}/readyz`).then((r) => r.status, () => 0), (status) => status === 204, 60_000, 200);
  if (ready !== 204) await stop();
  expect(ready).toBe(204);
  return { pid: child.pid!, client: createClient(ReceiptsService, createPeerTransport(grpc(grpcPort))), stop };
}

describe("hostile PDFs", () => {
  it.each<[string, "JavaScript" | "Launch", { objectStreams?: boolean; escapeNames?: boolean }]>([
    ["JavaScript in a link annotation, its names escaped (/S /Java#53cript /J#53)", "JavaScript", { escapeNames: true }],
    ["JavaScript in a link annotation inside a compressed object stream", "JavaScript", { objectStreams: true }],
    ["a launch action in a link annotation inside a compressed object stream", "Launch", { objectStreams: true }],
  ])("sends a matching receipt with %s to manual_check potential_fake although the provider has the money", async (_name, action, options) => {
    const op = await awaitingPayment("1500.00");
    await sandbox("POST", `/control/operations/${op.operation_id}/pay`, { amount: "1500.00" });
    const res = await confirm(op.operation_id, await actionReceiptPdf({ amount: "1500.00 RUB", recipient: op.number }, action, options));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "manual_check", manual_check_reason: "potential_fake" });
    const recorded = await stack.services.receipts.sql.selectFrom("confirmations").selectAll().where("operationId", "=", op.operation_id).executeTakeFirstOrThrow();
    expect(JSON.parse(recorded.findings).map((f: { code: string }) => f.code)).toContain("javascript");
  });

  it("completes the same receipt without an action when written with compressed object streams", async () => {
    const op = await awaitingPayment("1500.00");
    await sandbox("POST", `/control/operations/${op.operation_id}/pay`, { amount: "1500.00" });
    const compressed = await receiptPdf({ amount: "1500.00 RUB", recipient: op.number }, { objectStreams: true });
    expect((await confirm(op.operation_id, compressed)).body).toMatchObject({ status: "completed", actual_amount: "1500.00" });
  });

  it("answers a decompression bomb through confirm_payment with the operation in manual_check not_terminal, never a 5xx", async () => {
    const op = await awaitingPayment();
    const res = await confirm(op.operation_id, await bombReceiptPdf({ amount: "1500.00 RUB", recipient: op.number }, 1024 * MiB));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "manual_check", manual_check_reason: "not_terminal" });
    const recorded = await stack.services.receipts.sql.selectFrom("confirmations").selectAll().where("operationId", "=", op.operation_id).executeTakeFirstOrThrow();
    expect(JSON.parse(recorded.findings)).toContainEqual({ code: "decompression_limit", detail: "not parsed: its streams decode to more than 32 MiB" });
  });

  it("two decompression bombs in flight keep a receipts process under 512 MB; both end in manual_check not_terminal, refused before parsing or stopped by the parser's limit", async () => {
    const replica = await receiptsProcess();
    try {
      const [plain, encrypted] = [await awaitingPayment(), await awaitingPayment()];
      // 1 MB each, inflating to 1 GiB: in a content stream, and the same encrypted.
      const bombs = [
        { op: plain, pdf: await bombReceiptPdf({ amount: "1500.00 RUB", recipient: plain.number }, 1024 * MiB), finding: "decompression_limit" },
        { op: encrypted, pdf: encryptedBombPdf(1024 * MiB), finding: "unreadable" }, // the cap cannot see encrypted streams
      ];
      const memory = sampleMemory(replica.pid);
      const answers = await Promise.all(
        bombs.map(({ op, pdf }) =>
          replica.client.uploadConfirmation({ shopId: shop.shopId, operationId: op.operation_id, confirmationType: "receipt", content: pdf, contentType: "application/pdf", filename: "r.pdf" }, { timeoutMs: 30_000 }),
        ),
      );
      const peaks = memory.stop();
      expect(peaks.treeMb).toBeLessThan(512);
      for (const { operation } of answers) expect(operation).toMatchObject({ status: "manual_check", manualCheckReason: "not_terminal" });
      for (const { op, finding } of bombs) {
        const recorded = await stack.services.receipts.sql.selectFrom("confirmations").selectAll().where("operationId", "=", op.operation_id).executeTakeFirstOrThrow();
        expect(JSON.parse(recorded.findings).map((f: { code: string }) => f.code)).toContain(finding);
      }
    } finally {
      await replica.stop();
    }
  });
});

// ---- confirm_payment: request errors --------------------------------------------------------------

describe("POST /v1/confirm_payment: errors", () => {
  it("answers 400 for an empty file and leaves the operation awaiting_confirmation", async () => {
    const op = await awaitingPayment();
    const res = await confirm(op.operation_id, Buffer.alloc(0));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "validation_error", details: [{ field: "receipt", issue: "must not be empty" }] });
    expect((await stateById(op.operation_id)).body.status).toBe("awaiting_confirmation");
  });

  it("answers 413 with the error body for 10 MiB + 1 byte, and accepts exactly 10 MiB", async () => {
    const op = await awaitingPayment();
    const tooBig = Buffer.alloc(10 * MiB + 1, 0x20);
    tooBig.write("%PDF-1.7\n");
    const res = await confirm(op.operation_id, tooBig);
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: "payload_too_large", details: [{ field: "receipt" }] });
    expect((await stateById(op.operation_id)).body.status).toBe("awaiting_confirmation");

    // Exactly 10 MiB passes the limit: a "PDF" of padding cannot be read (not a fraud signal).
    const limit = await confirm(op.operation_id, tooBig.subarray(0, 10 * MiB));
    expect(limit.status).toBe(200);
    expect(limit.body).toMatchObject({ status: "manual_check", manual_check_reason: "not_terminal" });
  });

  it("answers 415 for a file neither sent as nor recognised as a PDF, JPEG or PNG; the payer can retry", async () => {
    const op = await awaitingPayment();
    const res = await confirm(op.operation_id, NOT_A_PDF, "text/plain", "receipt.txt");
    expect(res.status).toBe(415);
    expect(res.body.error).toMatchObject({ code: "unsupported_media_type", details: [{ field: "receipt" }] });
    expect((await stateById(op.operation_id)).body.status).toBe("awaiting_confirmation");
    expect((await confirm(op.operation_id, PNG_1X1, "image/png")).status).toBe(200);
  });

  it("sends bytes that are not a PDF but were sent as one to manual_check not_terminal (not a PDF, could not be validated)", async () => {
    const op = await awaitingPayment();
    const res = await confirm(op.operation_id, NOT_A_PDF, "application/pdf", "receipt.pdf");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "manual_check", manual_check_reason: "not_terminal", actual_amount: "0.00" });
  });

  it("takes a receipt part without its own Content-Type (optional in RFC 7578) as the file: its bytes decide", async () => {
    const op = await awaitingPayment("1500.00");
    await sandbox("POST", `/control/operations/${op.operation_id}/pay`, { amount: "1500.00" });
    const part = (headers: string, body: string | Buffer) => Buffer.concat([Buffer.from(`--zz\r\n${headers}\r\n\r\n`), Buffer.from(body), Buffer.from("\r\n")]);
    const body = Buffer.concat([
      part('Content-Disposition: form-data; name="operation_id"', op.operation_id),
      part('Content-Disposition: form-data; name="confirmation_type"', "receipt"),
      part('Content-Disposition: form-data; name="receipt"; filename="receipt.pdf"', await genuineFor(op)),
      Buffer.from("--zz--\r\n"),
    ]);
    const res = await fetch(`${stack.publicUrl}/v1/confirm_payment`, { method: "POST", headers: { "x-api-key": shop.apiKey, "content-type": "multipart/form-data; boundary=zz" }, body });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "completed", actual_amount: "1500.00" });
  });

  it("answers 400 naming the receipt for two receipt files", async () => {
    const op = await awaitingPayment();
    const res = await multipart("/v1/confirm_payment", [
      { name: "operation_id", value: op.operation_id },
      { name: "confirmation_type", value: "receipt" },
      { name: "receipt", value: PNG_1X1, filename: "a.png", type: "image/png" },
      { name: "receipt", value: PNG_1X1, filename: "b.png", type: "image/png" },
    ]);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "validation_error", details: [{ field: "receipt", issue: "must be a single file" }] });
  });

  it("answers 404 for another shop's operation and for an unknown one", async () => {
    const op = await awaitingPayment();
    const other = await confirm(op.operation_id, await genuineFor(op), "application/pdf", "receipt.pdf", otherShop.apiKey);
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe("not_found");
    expect((await confirm("00000000-0000-4000-8000-000000000000", PNG_1X1, "image/png")).status).toBe(404);
    expect((await stateById(op.operation_id)).body.status).toBe("awaiting_confirmation");
  });

  it("answers 412 unless the operation is awaiting_confirmation", async () => {
    const pending = await createPayment(PLAIN_METHOD, "100.00");
    expect(pending.status).toBe("pending");
    const res = await confirm(pending.operation_id, PNG_1X1, "image/png");
    expect(res.status).toBe(412);
    expect(res.body.error.code).toBe("invalid_state");

    const op = await awaitingPayment();
    expect((await confirm(op.operation_id, PNG_1X1, "image/png")).status).toBe(200);
    expect((await confirm(op.operation_id, PNG_1X1, "image/png")).status).toBe(412); // already manual_check
  });

  it("answers 400 naming every missing part, a non-UUID operation_id and another confirmation_type", async () => {
    const none = await multipart("/v1/confirm_payment", [{ name: "note", value: "x" }]);
    expect(none.status).toBe(400);
    expect(none.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(["confirmation_type", "operation_id", "receipt"]);

    const noFile = await multipart("/v1/confirm_payment", [
      { name: "operation_id", value: "00000000-0000-4000-8000-000000000000" },
      { name: "confirmation_type", value: "receipt" },
    ]);
    expect(noFile.status).toBe(400);
    expect(noFile.body.error.details).toEqual([{ field: "receipt", issue: "a file part is required" }]);

    const badId = await confirm("not-a-uuid", PNG_1X1, "image/png");
    expect(badId.status).toBe(400);
    expect(badId.body.error.details).toEqual([{ field: "operation_id", issue: "must be a UUID" }]);

    const op = await awaitingPayment();
    const otherType = await multipart("/v1/confirm_payment", [
      { name: "operation_id", value: op.operation_id },
      { name: "confirmation_type", value: "invoice" },
      { name: "receipt", value: PNG_1X1, filename: "r.png", type: "image/png" },
    ]);
    expect(otherType.status).toBe(400);
    expect(otherType.body.error.details).toEqual([{ field: "confirmation_type", issue: "must be receipt" }]);

    // A JSON body is not an upload (nor read as one): 400 naming every part, not 415 or 500.
    const asJson = await api("/v1/confirm_payment", { operation_id: op.operation_id, confirmation_type: "receipt" });
    expect(asJson.status).toBe(400);
    expect(asJson.body.error.details.map((d: { field: string }) => d.field)).toEqual(["operation_id", "confirmation_type", "receipt"]);
  });

  it("authenticates before parsing the upload", async () => {
    const res = await multipart("/v1/confirm_payment", [{ name: "receipt", value: PNG_1X1, filename: "r.png" }], {});
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe("x-api-key header is required");
  });
});

// ---- upload temp files ---------------------------------------------------------------------------

describe("multipart uploads leave nothing in the gateway's TMPDIR", () => {
  /** Every file and directory under the gateway's TMPDIR. */
  const leftovers = () => fs.readdir(uploads, { recursive: true });
  /** Bytes in files under it. */
  const spooled = async () => {
    const entries = await fs.readdir(uploads, { recursive: true, withFileTypes: true });
    const sizes = await Promise.all(entries.filter((e) => e.isFile()).map((e) => fs.stat(path.join(e.parentPath, e.name)).then((s) => s.size, () => 0)));
    return sizes.reduce((a, b) => a + b, 0);
  };
  // Each case on its own: what one leaves behind is not blamed on the next.
  afterEach(() => fs.rm(uploads, { recursive: true, force: true }).then(() => fs.mkdir(uploads)));
  const twoReceipts = (file: Buffer): Part[] => [
    { name: "receipt", value: file, filename: "a.pdf", type: "application/pdf" },
    { name: "receipt", value: file, filename: "b.pdf", type: "application/pdf" },
  ];

  it("after two receipt parts, on confirm_payment and on the checkout page", async () => {
    const op = await createPayment(RECEIPT_METHOD, "1500.00", shop.apiKey, "/v1/payment/link");
    const pdf = await genuineFor(op);
    const api = await multipart("/v1/confirm_payment", [{ name: "operation_id", value: op.operation_id }, { name: "confirmation_type", value: "receipt" }, ...twoReceipts(pdf)]);
    expect(api.status).toBe(400);
    expect(await leftovers()).toEqual([]);
    const page = await multipart(`/pay/${op.operation_id}/receipt`, twoReceipts(pdf), {});
    expect(page.status).toBe(400);
    expect(await leftovers()).toEqual([]);
  });

  it("after a refused upload and after an accepted one", async () => {
    const op = await awaitingPayment();
    const tooBig = Buffer.alloc(10 * MiB + 1, 0x20);
    tooBig.write("%PDF-1.7\n");
    expect((await confirm(op.operation_id, tooBig)).status).toBe(413);
    expect(await leftovers()).toEqual([]);
    expect((await confirm(op.operation_id, await genuineFor(op))).status).toBe(200);
    expect(await leftovers()).toEqual([]);
  });

  it("after an upload the client aborts mid-file", async () => {
    const op = await awaitingPayment();
    const head = `--zz\r\nContent-Disposition: form-data; name="operation_id"\r\n\r\n${op.operation_id}\r\n--zz\r\nContent-Disposition: form-data; name="receipt"; filename="r.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\n`;
    const req = http.request(`${stack.publicUrl}/v1/confirm_payment`, {
      method: "POST",
      headers: { "x-api-key": shop.apiKey, "content-type": "multipart/form-data; boundary=zz", "content-length": String(5 * MiB) },
    });
    req.on("error", () => undefined); // the abort below
    req.write(Buffer.concat([Buffer.from(head), Buffer.alloc(256 * 1024, 0x20)]));
    // The gateway has started spooling the file; then the client goes away.
    expect(await pollUntil(spooled, (bytes) => bytes > 0)).toBeGreaterThan(0);
    req.destroy();
    expect(await pollUntil(leftovers, (entries) => entries.length === 0)).toEqual([]);
  });
});

// ---- manual check resolution ------------------------------------------------------------------------

describe("POST /admin/api/operations/:id/resolve", () => {
  it("approves a manual check with the actual amount, once; the reason disappears", async () => {
    const op = await awaitingPayment("1500.00");
    expect((await confirm(op.operation_id, PNG_1X1, "image/png")).body.status).toBe("manual_check");
    const res = await resolve(op.operation_id, { decision: "approve", actual_amount: "1400.00", reason: "bank statement checked" }, "alice@ops");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ operation_id: op.operation_id, status: "completed", actual_amount: "1400.00" });
    expect(res.body).not.toHaveProperty("manual_check_reason");
    // The operator sees the requisites' card number masked.
    expect(res.body.number).toBe(`${op.number.slice(0, 6)}******${op.number.slice(-4)}`);
    // The status event alone materialises the evidence (nothing has read it yet).
    await until(async () => (await stack.services.receipts.sql.selectFrom("evidenceStates").selectAll().where("operationId", "=", op.operation_id).executeTakeFirst())?.status === "partial");
    const read = await stateById(op.operation_id);
    expect(read.body).toMatchObject({ status: "completed", actual_amount: "1400.00" });
    expect(read.body).not.toHaveProperty("manual_check_reason");
    // The provider never reported the money: the captured amount is one synthetic contribution.
    expect(read.body).toMatchObject({ receipt_evidence_status: "partial", receipts: [{ amount: 1400, receipt_url: null }] });
    // Nothing left to resolve.
    expect((await resolve(op.operation_id, { decision: "decline" })).status).toBe(412);
  });

  it("shows the approved amount as one synthetic contribution, partial, when the provider's legs add up to another amount", async () => {
    const op = await awaitingPayment("600.00");
    await sandbox("POST", `/control/operations/${op.operation_id}/pay`, { amount: "600.00", legs: ["350.00", "250.00"] });
    expect((await confirm(op.operation_id, PNG_1X1, "image/png")).body.status).toBe("manual_check");
    expect((await resolve(op.operation_id, { decision: "approve", actual_amount: "650.00", reason: "bank statement shows 650.00" })).status).toBe(200);
    const read = await pollUntil(() => stateById(op.operation_id), (res) => res.body.receipt_evidence_status !== "not_ready");
    // The provider's items add up to its legs (600.00), not to what arrived: they cannot decompose it.
    expect(read.body).toMatchObject({ status: "completed", actual_amount: "650.00", receipt_evidence_status: "partial", receipts: [{ amount: 650, receipt_url: null }] });
    expect(read.body.receipts).toHaveLength(1);
  });

  it("refuses an approval without the amount that arrived, whatever the provider reports, and one with more places than the currency holds; nothing changes", async () => {
    const op = await awaitingPayment("680.00");
    await sandbox("POST", `/control/operations/${op.operation_id}/pay`, { amount: "600.00" });
    expect((await confirm(op.operation_id, PNG_1X1, "image/png")).body.status).toBe("manual_check");
    const withoutAmount = await resolve(op.operation_id, { decision: "approve" });
    expect(withoutAmount.status).toBe(400);
    expect(withoutAmount.body.error).toMatchObject({ code: "validation_error", details: [{ field: "actual_amount", issue: "is required to approve: the amount that arrived" }] });
    const tooPrecise = await resolve(op.operation_id, { decision: "approve", actual_amount: "600.005" });
    expect(tooPrecise.status).toBe(400);
    expect(tooPrecise.body.error.details).toEqual([{ field: "actual_amount", issue: "must be a positive decimal string with at most 2 decimal places (RUB)" }]);
    expect((await stateById(op.operation_id)).body).toMatchObject({ status: "manual_check", actual_amount: "0.00" });

    expect((await resolve(op.operation_id, { decision: "approve", actual_amount: "600.00" })).body).toMatchObject({ status: "completed", actual_amount: "600.00", recorded_amount: "600.00" });
  });

  it("declines a potential fake", async () => {
    const op = await awaitingPayment("1500.00");
    expect((await confirm(op.operation_id, await genuineFor(op, "15.00"))).body.manual_check_reason).toBe("potential_fake");
    const res = await resolve(op.operation_id, { decision: "decline", reason: "forged" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "declined", actual_amount: "0.00" });
    expect(res.body).not.toHaveProperty("manual_check_reason");
  });

  it("refuses operations not in manual_check (412), unknown ones (404) and bad bodies (400)", async () => {
    const op = await awaitingPayment();
    expect((await resolve(op.operation_id, { decision: "approve", actual_amount: "1500.00" })).status).toBe(412);
    expect((await resolve("00000000-0000-4000-8000-000000000000", { decision: "approve", actual_amount: "1.00" })).status).toBe(404);
    const bad = await resolve(op.operation_id, { decision: "maybe", actual_amount: "1e3" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(["actual_amount", "decision"]);
    const unauthorized = await fetch(`${stack.adminUrl}/admin/api/operations/${op.operation_id}/resolve`, { method: "POST", body: "{}" });
    expect(unauthorized.status).toBe(401);
  });
});

describe("POST /v1/cancel_operation of a payment in manual_check", () => {
  it("cancels it: 200 cancelled, the cancelled webhook fires, the payer's money is late funds and nothing is booked; a repeat answers the same decision", async () => {
    const receiver = await startReceiver();
    try {
      const own = await createShopWithKey(stack, { webhook_url: receiver.url });
      receiver.secrets = [own.webhookSecret];
      const op = await awaitingPayment("800.00", own.apiKey);
      // The payer paid; the receipt is an image, which nothing can validate: a human is to look at it.
      await sandbox("POST", `/control/operations/${op.operation_id}/pay`, { amount: "800.00" });
      expect((await confirm(op.operation_id, PNG_1X1, "image/png", "receipt.png", own.apiKey)).body).toMatchObject({ status: "manual_check", manual_check_reason: "not_terminal" });

      const cancel = () => api("/v1/cancel_operation", { operation_id: op.operation_id, reason: "order withdrawn" }, own.apiKey);
      const first = await cancel();
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ outcome: "cancelled", operation: { operation_id: op.operation_id, type: "payment", status: "cancelled" } });
      const hook = await waitFor(() => receiver.verified.find((r) => r.json.type === "operation.cancelled" && r.json.data.operation_id === op.operation_id), 15_000, "the cancelled webhook");
      expect(hook.json.data).toMatchObject({ status: "cancelled", actual_amount: "0.00", settlement_amount: "0.00", receipts: [], receipt_evidence_status: "complete" });
      expect(hook.json.data).not.toHaveProperty("manual_check_reason");
      const read = await stateById(op.operation_id, own.apiKey);
      expect(read.body).toMatchObject({ status: "cancelled", actual_amount: "0.00" });
      expect(read.body).not.toHaveProperty("manual_check_reason");

      // The provider's 800.00 is recorded for someone to return; the ledger, having read the cancel, booked nothing.
      const lateFunds = await pollUntil(async () => (await admin(stack, "GET", `/admin/api/late-funds?state=open&shop_id=${own.shopId}`)).body.late_funds, (items) => items.length > 0);
      expect(lateFunds).toEqual([expect.objectContaining({ operation_id: op.operation_id, operation_status: "cancelled", amount: "800.00", currency: "RUB" })]);
      expect(await consumerCaughtUp(stack, LEDGER_DURABLE)).toBe(true);
      const rub = (await fetch(`${stack.publicUrl}/v1/balances`, { headers: { "x-api-key": own.apiKey } }).then(json)).balances.find((b: { currency: string }) => b.currency === "RUB");
      expect(rub).toEqual({ currency: "RUB", balance: "0.00", current_minus: "0.00", reserved: "0.00" });

      const repeat = await cancel();
      expect(repeat.body).toMatchObject({ outcome: "cancelled", operation: { status: "cancelled" } });
      expect((await resolve(op.operation_id, { decision: "approve", actual_amount: "800.00" })).status).toBe(412); // off the review queue
    } finally {
      await receiver.close();
    }
  });
});

// ---- evidence ---------------------------------------------------------------------------------------------

describe("receipt evidence in get_operation_state", () => {
  afterEach(() => receiptScenario("complete"));

  /** How many calls of an RPC (`Service/Method`) a unit has answered (its metrics on the health port). */
  async function callsAnswered(unit: "operations" | "receipts" | "routing", method: string): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${stack.services[unit].healthPort}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith(`grpc_server_handling_seconds_count{method="pgw.${unit}.v1.${method}",code="ok"}`));
    return line ? Number(line.split(" ").pop()) : 0;
  }
  const operationsCalls = (method: string) => callsAnswered("operations", `OperationsService/${method}`);
  const evidenceCalls = () => callsAnswered("receipts", "ReceiptsService/GetEvidence");

  /** A payment the payer pays in `legs` and confirms with a genuine receipt; completed by the review. */
  async function paidInLegs(amount: string, legs: string[]) {
    const op = await awaitingPayment(amount);
    await sandbox("POST", `/control/operations/${op.operation_id}/pay`, { amount, legs });
    const confirmed = await confirm(op.operation_id, await genuineFor(op));
    expect(confirmed.body.status).toBe("completed");
    return op;
  }

  it("is not_ready with no receipts while the operation is mutable", async () => {
    const op = await awaitingPayment();
    const res = await stateById(op.operation_id);
    expect(res.body).toMatchObject({ status: "awaiting_confirmation", receipts: [], receipt_evidence_status: "not_ready" });
    const receipts = createClient(ReceiptsService, createPeerTransport(`http://127.0.0.1:${stack.services.receipts.grpcPort}`));
    expect(await receipts.getEvidence({ operationId: op.operation_id })).toMatchObject({ status: "not_ready", items: [] });
  });

  it("ignores a caller's completed snapshot with unusable figures: nothing is stored for an operation still mutable", async () => {
    const op = await awaitingPayment();
    const receipts = createClient(ReceiptsService, createPeerTransport(`http://127.0.0.1:${stack.services.receipts.grpcPort}`));
    const snapshot = { operationId: op.operation_id, status: "completed", actualAmount: "10.00", updatedAt: new Date().toISOString() };
    for (const bad of [{ actualAmount: "1e3" }, { actualAmount: "-5.00" }, { actualAmount: "" }, { actualAmount: "abc" }, { updatedAt: "x" }]) {
      expect(await receipts.getEvidence({ operationId: op.operation_id, completed: { ...snapshot, ...bad } })).toMatchObject({ status: "not_ready", items: [] });
    }
    expect(await stack.services.receipts.sql.selectFrom("evidenceStates").selectAll().where("operationId", "=", op.operation_id).executeTakeFirst()).toBeUndefined();
    expect((await stateById(op.operation_id)).body).toMatchObject({ receipts: [], receipt_evidence_status: "not_ready" });
  });

  it("is complete with one item per provider receipt over several legs, exact sums, ordered by completed_at then id", async () => {
    const op = await paidInLegs("3000.00", ["1200.00", "1800.00"]);
    const res = await stateById(op.operation_id);
    expect(res.status).toBe(200);
    expect(res.body.receipt_evidence_status).toBe("complete");
    const items = res.body.receipts as { id: string; amount: number; completed_at: string; receipt_url: string | null }[];
    // The sandbox splits a leg of 1000 or more into two receipts: 600 + 600 and 900 + 900.
    expect(items.map((i) => i.amount).sort((a, b) => a - b)).toEqual([600, 600, 900, 900]);
    expect(sum(items)).toBe(3000);
    expect([...items].sort(byCompletedThenId)).toEqual(items);
    expect(new Set(items.map((i) => i.completed_at)).size).toBe(2);
    expect(items.slice(0, 2).every((i) => i.amount === 600)).toBe(true); // the first leg completed first
    for (const i of items) {
      expect(i.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(typeof i.amount).toBe("number");
      expect(i.receipt_url).toMatch(new RegExp(`^${stack.publicUrl}/v1/receipts/${i.id}/file\\?expires=\\d+&signature=[0-9a-f]{64}$`));
    }
    // Stable: a second read shows the same items.
    expect((await stateById(op.operation_id)).body.receipts.map((i: { id: string }) => i.id)).toEqual(items.map((i) => i.id));
  });

  it("is complete for a payout settled in several legs: one item per leg, ordered by completed_at then id, JSON numbers adding up to the settled amount", async () => {
    expect((await admin(stack, "POST", `/admin/api/shops/${shop.shopId}/adjustments`, { currency: "RUB", amount: "2000.00", reason: "payout funds" })).status).toBe(201);
    const moid = `rcpt-payout-${Date.now()}-${++seq}`;
    const created = await api("/v1/payout", { merchant_operation_id: moid, client_id: "payee-1", method: PLAIN_METHOD, amount: "1000.00", currency: "RUB", number: "+79161234567", bankname: "sberbank" });
    expect(created.body).toMatchObject({ type: "payout", status: "pending" });
    const id = created.body.operation_id as string;
    // Legs under 1000.00, so the provider has one receipt per leg; it completes them in the order given, apart in time.
    await sandbox("POST", `/control/operations/${id}/settle`, { legs: ["450.00", "250.00", "300.00"] });
    await until(async () => (await stateById(id)).body.status === "completed");

    const res = await stateById(id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: "payout", status: "completed", actual_amount: "1000.00", receipt_evidence_status: "complete" });
    const items = res.body.receipts as { id: string; amount: number; completed_at: string; receipt_url: string | null }[];
    expect(items.map((i) => i.amount)).toEqual([450, 250, 300]); // the legs' order: by completion, not by amount
    expect(items.every((i) => typeof i.amount === "number")).toBe(true);
    expect(sum(items)).toBe(Number(res.body.actual_amount));
    expect(new Set(items.map((i) => i.completed_at)).size).toBe(3);
    expect([...items].sort(byCompletedThenId)).toEqual(items);
    for (const i of items) expect(i.receipt_url).toMatch(new RegExp(`^${stack.publicUrl}/v1/receipts/${i.id}/file\\?expires=\\d+&signature=[0-9a-f]{64}$`));
    expect((await stateByMoid(moid)).body.receipts.map((i: { id: string }) => i.id)).toEqual(items.map((i) => i.id));
  });

  it("is complete with no receipts for an operation that ended without money (cancelled, declined, expired): it can no longer change and has no leg to decompose", async () => {
    const [cancelled, declined, expired] = await Promise.all([1, 2, 3].map(() => createPayment(PLAIN_METHOD, "300.00")));
    expect((await api("/v1/cancel_operation", { operation_id: cancelled.operation_id })).body.outcome).toBe("cancelled");
    await sandbox("POST", `/control/operations/${declined.operation_id}/decline`);
    await sandbox("POST", `/control/operations/${expired.operation_id}/expire`);
    for (const [op, status] of [[cancelled, "cancelled"], [declined, "declined"], [expired, "expired"]] as const) {
      await until(async () => (await stateById(op.operation_id)).body.status === status);
      for (const read of [await stateById(op.operation_id), await stateByMoid(op.merchant_operation_id)]) {
        expect({ status, code: read.status, body: read.body }).toMatchObject({ status, code: 200, body: { status, actual_amount: "0.00", receipts: [], receipt_evidence_status: "complete" } });
      }
    }
  });

  it("is read from receipts once: later reads come from the gateway with renewed links that download", async () => {
    const before = await evidenceCalls();
    const op = await paidInLegs("640.00", ["640.00"]); // confirm_payment's answer reads the evidence
    // One call from that answer and one from the notifier's webhook for the completion, in either order.
    await until(async () => (await evidenceCalls()) >= before + 2);
    const settled = await evidenceCalls();
    const first = (await stateById(op.operation_id)).body;
    const expiresOf = (body: typeof first) => Number(new URL(body.receipts[0].receipt_url).searchParams.get("expires"));
    // Links expire on whole seconds: read again until the gateway has signed a later one.
    const second = await pollUntil(async () => (await stateById(op.operation_id)).body, (body) => expiresOf(body) > expiresOf(first), 5000);
    expect(await evidenceCalls()).toBe(settled);

    expect(second).toEqual({ ...first, receipts: first.receipts.map((i: Record<string, unknown>) => ({ ...i, receipt_url: expect.any(String) })) });
    expect(expiresOf(second)).toBeGreaterThan(expiresOf(first));
    expect(expiresOf(second)).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 15 * 60);
    const file = await fetch(second.receipts[0].receipt_url.replace(/^https?:\/\/[^/]+/, stack.publicUrl));
    expect(file.status).toBe(200);
    expect([file.headers.get("content-type"), file.headers.get("x-content-type-options")]).toEqual(["application/pdf", "nosniff"]);
    expect(file.headers.get("content-disposition")).toMatch(/^inline; filename="receipt-[0-9a-f-]+\.pdf"$/);
    expect(Buffer.from(await file.arrayBuffer()).subarray(0, 5).toString()).toBe("%PDF-");
  });

  it("reads a terminal operation from operations once; later reads by either identifier come from the gateway, for its own shop only", async () => {
    const pending = await createPayment(PLAIN_METHOD, "350.00");
    const op = await paidInLegs("720.00", ["720.00"]);
    const reads = () => operationsCalls("GetOperationState");

    const beforePending = await reads();
    await stateById(pending.operation_id);
    await stateById(pending.operation_id);
    expect(await reads()).toBe(beforePending + 2); // pending can still change: asked every time

    const first = (await stateById(op.operation_id)).body;
    expect(first.status).toBe("completed");
    const settled = await reads();
    const again = (await stateById(op.operation_id)).body;
    const byMerchantId = (await api("/v1/get_operation_state", { merchant_operation_id: op.merchant_operation_id })).body;
    expect(await reads()).toBe(settled);
    const sameBut = (body: typeof first) => ({ ...body, receipts: body.receipts.map((i: Record<string, unknown>) => ({ ...i, receipt_url: expect.any(String) })) });
    expect(again).toEqual(sameBut(first));
    expect(byMerchantId).toEqual(sameBut(first));

    expect((await stateById(op.operation_id, otherShop.apiKey)).status).toBe(404);
    expect((await api("/v1/get_operation_state", { merchant_operation_id: op.merchant_operation_id }, otherShop.apiKey)).status).toBe(404);
  });

  it("is partial when a leg is a synthetic legacy contribution (amount of the leg, no link)", async () => {
    await receiptScenario("legacy");
    const op = await paidInLegs("1200.00", ["500.00", "700.00"]);
    const res = await stateById(op.operation_id);
    expect(res.status).toBe(200);
    expect(res.body.receipt_evidence_status).toBe("partial");
    expect(res.body.receipts).toHaveLength(2);
    const [legacy, real] = res.body.receipts;
    expect(legacy).toMatchObject({ amount: 500, receipt_url: null });
    expect(real).toMatchObject({ amount: 700, receipt_url: expect.stringContaining("/file?expires=") });
  });

  it("is unavailable while provider evidence is down: 503 by operation_id, 200 `unavailable` by merchant_operation_id; then materialised on demand", async () => {
    await receiptScenario("unavailable");
    const op = await paidInLegs("3000.00", ["1200.00", "1800.00"]);
    const byId = await stateById(op.operation_id);
    expect(byId.status).toBe(503);
    expect(byId.body.error.code).toBe("unavailable");
    const byMoid = await stateByMoid(op.merchant_operation_id);
    expect(byMoid.status).toBe(200);
    expect(byMoid.body).toMatchObject({ status: "completed", receipt_evidence_status: "unavailable", receipts: [] });

    await receiptScenario("complete");
    const checkoutsBefore = await operationsCalls("GetCheckout");
    const later = await stateById(op.operation_id);
    expect(later.status).toBe(200);
    expect(later.body.receipt_evidence_status).toBe("complete");
    expect(later.body.receipts.map((i: { amount: number }) => i.amount)).toEqual([600, 600, 900, 900]);
    // Materialised from the completed operation the gateway had just read, not by reading it again.
    expect(await operationsCalls("GetCheckout")).toBe(checkoutsBefore);
    // The answer of the materialisation itself is what was stored: same items, same order.
    const receipts = createClient(ReceiptsService, createPeerTransport(`http://127.0.0.1:${stack.services.receipts.grpcPort}`));
    const stored = await receipts.getEvidence({ operationId: op.operation_id });
    expect(stored.status).toBe("complete");
    const shape = (items: { id: string; amount: unknown; completedAt?: string; completed_at?: string; receiptUrl?: string; receipt_url?: string | null }[]) =>
      items.map((i) => ({ id: i.id, amount: Number(i.amount), completedAt: new Date(i.completedAt ?? i.completed_at!).toISOString(), hasFile: Boolean(i.receiptUrl ?? i.receipt_url) }));
    expect(shape(later.body.receipts)).toEqual(shape(stored.items));
  });

  it("asks the provider once when several reads need the same evidence materialised at once", async () => {
    await receiptScenario("unavailable");
    const op = await paidInLegs("900.00", ["900.00"]);
    expect((await stateById(op.operation_id)).status).toBe(503); // nothing stored yet
    await receiptScenario("complete");
    const providerCalls = () => callsAnswered("routing", "RoutingService/GetEvidence");
    const before = await providerCalls();
    const reads = await Promise.all(Array.from({ length: 6 }, () => stateByMoid(op.merchant_operation_id)));
    for (const r of reads) expect(r.body).toMatchObject({ receipt_evidence_status: "complete", receipts: [{ amount: 900 }] });
    expect(await providerCalls()).toBe(before + 1);
  });

  it("answers 404 to another shop and shows no receipts for a declined operation", async () => {
    const op = await awaitingPayment();
    expect((await stateById(op.operation_id, otherShop.apiKey)).status).toBe(404);
    await confirm(op.operation_id, await genuineFor(op, "1.00"));
    await resolve(op.operation_id, { decision: "decline" });
    expect((await stateById(op.operation_id)).body).toMatchObject({ status: "declined", receipts: [] });
  });
});

// ---- signed receipt links ------------------------------------------------------------------------------

describe("GET /v1/receipts/:id/file", () => {
  let item: { id: string; amount: number; receipt_url: string };

  beforeAll(async () => {
    const op = await awaitingPayment("640.00");
    await sandbox("POST", `/control/operations/${op.operation_id}/pay`, { amount: "640.00" });
    expect((await confirm(op.operation_id, await genuineFor(op))).body.status).toBe("completed");
    item = (await stateById(op.operation_id)).body.receipts[0];
  });

  const fetchLink = (url: string) => fetch(url.replace(/^https?:\/\/[^/]+/, stack.publicUrl));

  it("serves the provider's PDF without an API key", async () => {
    for (let i = 0; i < 2; i++) {
      // The second download comes from the receipts service's cache.
      const res = await fetchLink(item.receipt_url);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/pdf");
      const body = Buffer.from(await res.arrayBuffer());
      expect(body.subarray(0, 5).toString()).toBe("%PDF-");
    }
  });

  it("refuses an expired link and an altered one (404 with the error body)", async () => {
    const past = Math.floor(Date.now() / 1000) - 1;
    const expired = `${stack.publicUrl}/v1/receipts/${item.id}/file?expires=${past}&signature=${hmacHex(DEV_LINK_SECRET, `${item.id}.${past}`)}`;
    const res = await fetchLink(expired);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({ code: "not_found", message: expect.stringContaining("expired") });

    const url = new URL(item.receipt_url);
    const signature = url.searchParams.get("signature")!;
    const flipped = signature.slice(0, -1) + (signature.endsWith("0") ? "1" : "0");
    const altered = [
      item.receipt_url.replace(signature, flipped),
      item.receipt_url.replace(`expires=${url.searchParams.get("expires")}`, `expires=${Number(url.searchParams.get("expires")) + 60}`),
      item.receipt_url.replace(item.id, "00000000-0000-4000-8000-000000000000"),
      item.receipt_url.replace(/&signature=.*/, ""),
    ];
    for (const link of altered) {
      const r = await fetchLink(link);
      expect({ link, status: r.status }).toEqual({ link, status: 404 });
    }
    // A far-future expiry is refused even when correctly signed.
    const far = Math.floor(Date.now() / 1000) + 3600;
    expect((await fetchLink(`${stack.publicUrl}/v1/receipts/${item.id}/file?expires=${far}&signature=${hmacHex(DEV_LINK_SECRET, `${item.id}.${far}`)}`)).status).toBe(404);
  });
});

// ---- hosted checkout ---------------------------------------------------------------------------------

describe("hosted checkout page /pay/:operation_id", () => {
  it("shows amount, requisites and status, accepts a receipt upload without an API key and reflects the outcome", async () => {
    const op = await createPayment(RECEIPT_METHOD, "1500.00", shop.apiKey, "/v1/payment/link");
    expect(op.payment_url).toBe(`${stack.publicUrl}/pay/${op.operation_id}`);
    const page = await fetch(op.payment_url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    // Never framed (clickjacking of the upload), no inline code, nothing loaded from elsewhere.
    const csp = page.headers.get("content-security-policy");
    expect(csp).toMatch(/^default-src 'none'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect([page.headers.get("x-frame-options"), page.headers.get("x-content-type-options")]).toEqual(["DENY", "nosniff"]);
    const html = await page.text();
    expect(html.match(/<script[^>]*>/g)).toEqual([expect.stringMatching(/^<script src="\/pay\/assets\/checkout-[0-9a-f]+\.js" defer>$/)]);
    expect(html).not.toContain("<style");
    expect(html).toContain(">1500.00</span> <span class=\"unit\">RUB<");
    expect(html).toContain(escapeHtml(op.number));
    expect(html).toContain('data-status="awaiting_confirmation">Awaiting your receipt');
    expect(html).toContain(`action="/pay/${op.operation_id}/receipt"`);
    expect(html).not.toContain(shop.shopId); // no id beyond the operation's own
    const script = await fetch(stack.publicUrl + html.match(/<script src="([^"]+)"/)![1]);
    expect([script.status, script.headers.get("content-type"), script.headers.get("cache-control")]).toEqual([200, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable"]);
    expect(await (await fetch(`${op.payment_url}/status`)).json()).toEqual({ status: "awaiting_confirmation", title: "Awaiting your receipt", message: expect.any(String), final: false });

    // Refusals are told in the payer's words, never the API's.
    const refused = await multipart(`/pay/${op.operation_id}/receipt`, [{ name: "receipt", value: NOT_A_PDF, filename: "receipt.txt", type: "text/plain" }], {});
    expect(refused.status).toBe(415);
    expect(String(refused.body)).toContain("Upload the receipt as a PDF, JPEG or PNG file.");
    const tooLarge = await multipart(`/pay/${op.operation_id}/receipt`, [{ name: "receipt", value: Buffer.alloc(10 * MiB + 1, 0x20), filename: "receipt.pdf", type: "application/pdf" }], {});
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.headers.get("content-type")).toContain("text/html"); // the page with the reason, as for any refusal
    expect(String(tooLarge.body)).toContain("The file is larger than 10 MB.");
    const noFile = await multipart(`/pay/${op.operation_id}/receipt`, [{ name: "other", value: "x" }], {});
    expect(noFile.status).toBe(400);
    expect(String(noFile.body)).toContain("Choose one receipt file");
    expect(String(noFile.body)).not.toContain("missing or invalid parts");

    const upload = await multipart(`/pay/${op.operation_id}/receipt`, [{ name: "receipt", value: await genuineFor(op), filename: "receipt.pdf", type: "application/pdf" }], {});
    expect(upload.status).toBe(303);
    expect(upload.headers.get("location")).toBe(`/pay/${op.operation_id}`);
    const after = await (await fetch(op.payment_url)).text();
    expect(after).toContain('data-status="manual_check">Under review'); // the provider has not seen the money yet
    expect(after).not.toContain("<form");
  });

  it("answers 404 for an unknown operation and when the shop has checkout disabled", async () => {
    expect((await fetch(`${stack.publicUrl}/pay/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    expect((await fetch(`${stack.publicUrl}/pay/not-a-uuid`)).status).toBe(404);
    expect((await fetch(`${stack.publicUrl}/pay/assets/checkout-0000.js`)).status).toBe(404);
    const op = await createPayment(RECEIPT_METHOD, "100.00", otherShop.apiKey, "/v1/payment/link");
    expect(op.payment_url).toBeNull();
    expect((await fetch(`${stack.publicUrl}/pay/${op.operation_id}`)).status).toBe(404);
    const status = await fetch(`${stack.publicUrl}/pay/${op.operation_id}/status`);
    expect([status.status, ((await status.json()) as any).error.code]).toEqual([404, "not_found"]);
    expect((await multipart(`/pay/${op.operation_id}/receipt`, [{ name: "receipt", value: PNG_1X1, filename: "r.png" }], {})).status).toBe(404);
  });
});
