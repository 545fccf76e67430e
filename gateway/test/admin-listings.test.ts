import { randomUUID } from "node:crypto";
import { PNG_1X1 } from "../../services/receipts/test/receipt-pdfs";
import { startReceiver, type Receiver } from "../../services/notifier/test/support/receiver";
import { merchantClient, newMoid, sandboxControl } from "../../test/support/merchant";
import { pollUntil } from "../../test/support/poll";
import { admin, createShopWithKey, startStack, type Stack } from "../../test/support/stack";

let stack: Stack;
let receiver: Receiver;
let shop: Awaited<ReturnType<typeof createShopWithKey>>;
let m: ReturnType<typeof merchantClient>;

beforeAll(async () => {
  stack = await startStack();
  receiver = await startReceiver();
  shop = await createShopWithKey(stack, { webhook_url: receiver.url });
  receiver.secrets.push(shop.webhookSecret);
  m = merchantClient(stack, shop.apiKey);
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

const ids = (body: { items: { id?: string; operation_id?: string }[] }) => body.items.map((i) => i.id ?? i.operation_id);
const payment = (method = "WT_RUB_PHONE") => ({ merchant_operation_id: newMoid("list"), client_id: "payer-1", method, amount: "100.00", currency: "RUB" });

/** Every page of a listing, following next_cursor. */
async function allPages(path: string): Promise<{ pages: number; ids: string[] }> {
  const seen: string[] = [];
  let pages = 0;
  let next: string | null = "";
  while (next !== null) {
    const res = await admin(stack, "GET", `${path}${next ? `&cursor=${next}` : ""}`);
    expect(res.status).toBe(200);
    seen.push(...(ids(res.body) as string[]));
    next = res.body.next_cursor;
    pages += 1;
  }
  return { pages, ids: seen };
}

describe("GET /admin/api/merchants and /admin/api/shops", () => {
  it("lists merchants newest first, searched by part of the name or by id, a page at a time", async () => {
    const tag = `Acme-${Date.now().toString(36)}`;
    const made: string[] = [];
    for (const n of [1, 2, 3]) made.push((await admin(stack, "POST", "/admin/api/merchants", { name: `${tag} ${n}` })).body.id);
    const listed = await allPages(`/admin/api/merchants?q=${tag.toLowerCase()}&limit=2`);
    expect(listed).toEqual({ pages: 2, ids: [...made].reverse() });
    const byId = await admin(stack, "GET", `/admin/api/merchants?q=${made[1]}`);
    expect(byId.body).toEqual({ items: [expect.objectContaining({ id: made[1], name: `${tag} 2`, created_at: expect.any(String) })], next_cursor: null });
    expect((await admin(stack, "GET", `/admin/api/merchants?q=${encodeURIComponent("%")}`)).body.items).toEqual([]);
  });

  it("lists a merchant's shops with every setting, searched by name", async () => {
    const merchant = (await admin(stack, "POST", "/admin/api/merchants", { name: "Shops owner" })).body;
    const first = (await admin(stack, "POST", "/admin/api/shops", { merchant_id: merchant.id, name: "Books" })).body;
    const second = (await admin(stack, "POST", "/admin/api/shops", { merchant_id: merchant.id, name: "Games", checkout_enabled: true })).body;
    const all = await admin(stack, "GET", `/admin/api/shops?merchant_id=${merchant.id}`);
    expect(ids(all.body)).toEqual([second.id, first.id]);
    expect(all.body.items[0]).toEqual(expect.objectContaining({ merchant_id: merchant.id, name: "Games", checkout_enabled: true, settlement_currency: "RUB", rate_limit_rps: 100 }));
    expect(ids((await admin(stack, "GET", `/admin/api/shops?merchant_id=${merchant.id}&q=BOO`)).body)).toEqual([first.id]);
    expect(ids((await admin(stack, "GET", `/admin/api/shops?q=${second.id}`)).body)).toEqual([second.id]);
  });

  it.each([
    ["/admin/api/merchants?cursor=bm90IGEgY3Vyc29y", "cursor"],
    ["/admin/api/merchants?cursor=%%%", "cursor"],
    ["/admin/api/merchants?limit=0", "limit"],
    ["/admin/api/merchants?limit=501", "limit"],
    ["/admin/api/merchants?q=a&q=b", "q"],
    ["/admin/api/shops?merchant_id=nope", "merchant_id"],
    ["/admin/api/shops?limit=ten", "limit"],
    // The listings that answer a limit only take their parameters by the same rules.
    ["/admin/api/late-funds?shop_id=42", "shop_id"],
    ["/admin/api/late-funds?state=lost", "state"],
    ["/admin/api/late-funds?limit=1e2", "limit"],
    [`/admin/api/late-funds?shop_id=${randomUUID()}&shop_id=${randomUUID()}`, "shop_id"],
    [`/admin/api/shops/${randomUUID()}/webhook-deliveries?limit=501`, "limit"],
    [`/admin/api/shops/${randomUUID()}/webhook-deliveries?limit=5&limit=6`, "limit"],
  ])("answers %s with a 400 naming %s", async (path, field) => {
    const res = await admin(stack, "GET", path);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "validation_error", details: [expect.objectContaining({ field })] });
  });
});

describe("GET /admin/api/operations", () => {
  it("finds operations by either id, status and creation time, a page at a time", async () => {
    const made = [];
    for (let i = 0; i < 3; i++) {
      const body = payment();
      made.push({ ...(await m.payment(body)).body, merchant_operation_id: body.merchant_operation_id });
    }
    const path = `/admin/api/operations?shop_id=${shop.shopId}`;
    const listed = await allPages(`${path}&limit=2`);
    expect(listed.ids.slice(0, 3)).toEqual(made.map((o) => o.operation_id).reverse());

    const byMoid = await admin(stack, "GET", `/admin/api/operations?q=${encodeURIComponent(made[0].merchant_operation_id)}`);
    expect(byMoid.body.items).toEqual([expect.objectContaining({ operation_id: made[0].operation_id, shop_id: shop.shopId, merchant_operation_id: made[0].merchant_operation_id })]);
    expect(ids((await admin(stack, "GET", `/admin/api/operations?q=${made[1].operation_id}`)).body)).toEqual([made[1].operation_id]);
    expect((await admin(stack, "GET", `${path}&status=completed&q=${made[2].operation_id}`)).body.items).toEqual([]);

    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expect(ids((await admin(stack, "GET", `${path}&q=${made[0].operation_id}&from=${today}&to=${today}`)).body)).toEqual([made[0].operation_id]);
    expect((await admin(stack, "GET", `${path}&from=${tomorrow}`)).body.items).toEqual([]);
    expect((await admin(stack, "GET", `${path}&to=${yesterday}`)).body.items).toEqual([]);
    const second = (await admin(stack, "GET", `${path}&q=${made[1].operation_id}`)).body.items[0];
    const sinceSecond = await admin(stack, "GET", `${path}&from=${encodeURIComponent(second.created_at)}`);
    expect(ids(sinceSecond.body)).toEqual([made[2].operation_id, made[1].operation_id]);
  });

  it.each([
    ["status=paid", "status"],
    ["from=yesterday", "from"],
    ["to=2026-13-40", "to"],
    ["cursor=abc", "cursor"],
    ["shop_id=42", "shop_id"],
    ["limit=-1", "limit"],
  ])("answers ?%s with a 400 naming %s", async (query, field) => {
    const res = await admin(stack, "GET", `/admin/api/operations?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "validation_error", details: [expect.objectContaining({ field })] });
  });
});

describe("GET /admin/api/operations/:id/timeline", () => {
  it("shows a paid payment's status changes with their causes and its delivered webhook", async () => {
    const op = (await m.payment(payment())).body;
    await sandboxControl(stack).pay(op.operation_id, { amount: "100.00" });
    await pollUntil(() => receiver.successes().find((w) => w.body.includes(op.operation_id)), Boolean);
    const timeline = await pollUntil(
      () => admin(stack, "GET", `/admin/api/operations/${op.operation_id}/timeline`),
      (res) => res.body?.webhook_deliveries?.[0]?.status === "delivered",
    );
    expect(timeline.status).toBe(200);
    expect(timeline.body.operation).toMatchObject({ operation_id: op.operation_id, status: "completed", shop_id: shop.shopId });
    expect(timeline.body.status_changes).toEqual([
      { from: "creating", to: "pending", at: expect.any(String), cause: "allocated", actor: null, reason: null },
      { from: "pending", to: "completed", at: expect.any(String), cause: "provider", actor: null, reason: null },
    ]);
    expect(timeline.body.webhook_deliveries).toEqual([expect.objectContaining({ event_type: "operation.completed", operation_id: op.operation_id, attempts: 1 })]);
    expect(timeline.body.confirmations).toEqual([]);
  });

  it("shows a receipt's review findings and who resolved the manual check", async () => {
    const sandbox = sandboxControl(stack);
    await sandbox.scenario({ method: "WT_RUB_C2C", accept: "accept", requires_receipt: true, evidence: "complete" });
    try {
      const op = (await m.payment(payment("WT_RUB_C2C"))).body;
      expect(op.status).toBe("awaiting_confirmation");
      const form = new FormData();
      form.append("operation_id", op.operation_id);
      form.append("confirmation_type", "receipt");
      form.append("receipt", new Blob([PNG_1X1], { type: "image/png" }), "receipt.png");
      const confirmed = await fetch(`${stack.publicUrl}/v1/confirm_payment`, { method: "POST", headers: { "x-api-key": shop.apiKey }, body: form });
      expect(((await confirmed.json()) as { status: string }).status).toBe("manual_check");
      const resolved = await admin(stack, "POST", `/admin/api/operations/${op.operation_id}/resolve`, { decision: "approve", actual_amount: "100.00", reason: "bank statement checked" });
      expect(resolved.status).toBe(200);

      const timeline = (await admin(stack, "GET", `/admin/api/operations/${op.operation_id}/timeline`)).body;
      expect(timeline.status_changes).toEqual([
        expect.objectContaining({ from: "creating", to: "awaiting_confirmation", cause: "allocated" }),
        expect.objectContaining({ from: "awaiting_confirmation", to: "manual_check", cause: "receipt_review", actor: "receipts", reason: "not_terminal" }),
        expect.objectContaining({ from: "manual_check", to: "completed", cause: "manual_check", actor: "admin", reason: "bank statement checked" }),
      ]);
      expect(timeline.confirmations).toEqual([
        expect.objectContaining({ filename: "receipt.png", content_type: "image/png", outcome: "manual_check", manual_check_reason: "not_terminal", findings: expect.arrayContaining([expect.objectContaining({ code: expect.any(String) })]) }),
      ]);
    } finally {
      await sandbox.reset();
    }
  });

  it("answers 404 for an unknown or malformed operation id", async () => {
    expect((await admin(stack, "GET", "/admin/api/operations/00000000-0000-4000-8000-000000000000/timeline")).status).toBe(404);
    const malformed = await admin(stack, "GET", "/admin/api/operations/nope/timeline");
    expect(malformed.status).toBe(404);
    expect(malformed.body.error.code).toBe("not_found");
  });
});

describe("shop settings and journal", () => {
  it("edits every shop setting and reads it back", async () => {
    const changed = await admin(stack, "PATCH", `/admin/api/shops/${shop.shopId}`, {
      name: "Renamed",
      webhook_url: `${receiver.url}/other`,
      checkout_enabled: true,
      settlement_currency: "USDT",
      overdraft_limit: "25.5",
      rate_limit_rps: 250,
    });
    expect(changed.status).toBe(200);
    const read = (await admin(stack, "GET", `/admin/api/shops/${shop.shopId}`)).body;
    expect(read).toMatchObject({ name: "Renamed", webhook_url: `${receiver.url}/other`, checkout_enabled: true, settlement_currency: "USDT", overdraft_limit: "25.500000", rate_limit_rps: 250 });
    const restored = await admin(stack, "PATCH", `/admin/api/shops/${shop.shopId}`, { webhook_url: receiver.url, settlement_currency: "RUB", overdraft_limit: "0" });
    expect(restored.body).toMatchObject({ webhook_url: receiver.url, settlement_currency: "RUB", overdraft_limit: "0.00" });
  });

  it("shows an adjustment in the shop's journal with its reason and actor", async () => {
    const posted = await admin(stack, "POST", `/admin/api/shops/${shop.shopId}/adjustments`, { currency: "RUB", amount: "12.34", reason: "goodwill credit" });
    expect(posted.status).toBe(201);
    const journal = await admin(stack, "GET", `/admin/api/shops/${shop.shopId}/journal?currency=RUB&limit=5`);
    expect(journal.status).toBe(200);
    expect(journal.body.postings[0]).toEqual(
      expect.objectContaining({ entry_id: posted.body.entry_id, kind: "adjustment", reason: "goodwill credit", actor: "admin", account: "available", currency: "RUB", amount: "12.34" }),
    );
    expect((await admin(stack, "GET", `/admin/api/shops/${shop.shopId}/journal?currency=EUR`)).status).toBe(400);
    expect((await admin(stack, "GET", "/admin/api/shops/00000000-0000-4000-8000-000000000000/journal")).status).toBe(404);
  });
});
