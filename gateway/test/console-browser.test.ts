import type { Browser, Page } from "playwright-core";
import { PNG_1X1 } from "../../services/receipts/test/receipt-pdfs";
import { startReceiver, type Receiver } from "../../services/notifier/test/support/receiver";
import { accessibilityViolations, launchBrowser, newPage, screenshot } from "../../test/support/browser";
import { merchantClient, newMoid, sandboxControl } from "../../test/support/merchant";
import { pollUntil } from "../../test/support/poll";
import { ADMIN_TOKEN, admin, startStack, type Stack } from "../../test/support/stack";

let stack: Stack;
let browser: Browser;
let receiver: Receiver;

beforeAll(async () => {
  [stack, browser, receiver] = await Promise.all([startStack(), launchBrowser(), startReceiver()]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await stack?.stop();
});

/** A signed-in console page. */
async function signedIn(): Promise<Page> {
  const page = await newPage(browser);
  await page.goto(`${stack.adminUrl}/admin`);
  await page.getByLabel("Operator token (the admin token in local mode)").fill(ADMIN_TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/admin\/merchants$/);
  return page;
}

/** Creates a merchant and a shop in the console and answers the shop page's URL and the webhook secret it showed once. */
async function createShop(page: Page, name: string): Promise<{ shopUrl: string; secret: string }> {
  await page.getByLabel("Merchant name").fill(`${name} merchant`);
  await page.getByRole("button", { name: "Create merchant" }).click();
  await page.getByRole("heading", { name: `${name} merchant` }).waitFor();
  await page.getByLabel("Shop name").fill(name);
  await page.getByLabel("Hosted checkout").check();
  await page.getByRole("button", { name: "Create shop" }).click();
  await page.getByRole("heading", { name, exact: true }).waitFor();
  const shopId = await page.locator("main p.muted code").first().textContent();
  return { shopUrl: `${stack.adminUrl}/admin/shops/${shopId}`, secret: (await page.locator("#revealed-secret").textContent())! };
}

describe("admin console in a browser", () => {
  it("refuses a wrong token with a sentence and keeps no session", async () => {
    const page = await newPage(browser);
    await page.goto(`${stack.adminUrl}/admin/merchants`);
    await page.waitForURL(/\/admin\/sign-in$/);
    await page.getByLabel("Operator token (the admin token in local mode)").fill("wrong-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("An operator token is required.");
    expect(await page.context().cookies()).toEqual([]);
    await page.context().close();
  });

  it("creates a merchant and a shop, issues and revokes a key, sets a webhook and rotates its secret", async () => {
    const page = await signedIn();
    const session = (await page.context().cookies()).find((c) => c.name === "pgw_console");
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/admin" });
    const { shopUrl, secret } = await createShop(page, "Console shop");
    expect(secret).toMatch(/^whsec_/);
    const shopId = shopUrl.split("/").pop()!;

    await page.getByLabel("Label of a new key").fill("checkout");
    await page.getByRole("button", { name: "Issue API key" }).click();
    const apiKey = (await page.locator("#revealed-key").textContent())!;
    expect(apiKey).toMatch(/^pgw_/);
    const m = merchantClient(stack, apiKey);
    expect((await m.get("/v1/balances")).status).toBe(200);
    await page.goto(shopUrl); // shown once: a reload shows it no more
    await expect(page.locator("#revealed-key").count()).resolves.toBe(0);

    await page.getByRole("link", { name: "Revoke", exact: true }).click();
    await page.getByRole("button", { name: "Revoke this key" }).click();
    await page.getByText("The API key is revoked").waitFor();
    expect((await m.get("/v1/balances")).status).toBe(401);

    await page.getByLabel("Webhook URL (empty: none)").fill(receiver.url);
    await page.getByLabel("Rate limit (requests/s)").fill("250");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Settings saved.").waitFor();
    expect((await admin(stack, "GET", `/admin/api/shops/${shopId}`)).body).toMatchObject({ webhook_url: receiver.url, rate_limit_rps: 250, checkout_enabled: true });

    await page.getByRole("button", { name: "Rotate signing secret" }).click();
    const rotated = (await page.locator("#revealed-secret").textContent())!;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await screenshot(page, "console-shop");
    await expect(accessibilityViolations(page)).resolves.toEqual([]);
    await page.context().close();
  });

  it("finds an operation, reads its timeline and resolves its manual check", async () => {
    const page = await signedIn();
    const shop = await admin(stack, "POST", "/admin/api/shops", { merchant_id: (await admin(stack, "POST", "/admin/api/merchants", { name: "Receipts" })).body.id, name: "Receipts shop", checkout_enabled: true });
    const key = (await admin(stack, "POST", `/admin/api/shops/${shop.body.id}/api-keys`, {})).body.api_key;
    await sandboxControl(stack).scenario({ method: "WT_RUB_C2C", accept: "accept", requires_receipt: true, evidence: "complete" });
    const moid = newMoid("console");
    const op = (await merchantClient(stack, key).payment({ merchant_operation_id: moid, client_id: "payer", method: "WT_RUB_C2C", amount: "700.00", currency: "RUB" })).body;
    await sandboxControl(stack).reset();
    const form = new FormData();
    form.append("operation_id", op.operation_id);
    form.append("confirmation_type", "receipt");
    form.append("receipt", new Blob([PNG_1X1], { type: "image/png" }), "receipt.png");
    await fetch(`${stack.publicUrl}/v1/confirm_payment`, { method: "POST", headers: { "x-api-key": key }, body: form });

    await page.getByRole("link", { name: "Operations" }).click();
    await page.getByLabel("Operation id or merchant operation id").fill(moid);
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("link", { name: moid }).click();
    await page.getByText("awaiting_confirmation → manual_check").waitFor();
    await expect(page.locator("main").textContent()).resolves.toContain("receipt.png (image/png) → manual_check, not_terminal");
    // The shop offers the hosted checkout: the console links the payer's page, which shows the review.
    await expect(page.getByRole("link", { name: "the payer's page" }).getAttribute("href")).resolves.toBe(`${stack.publicUrl}/pay/${op.operation_id}`);
    const payerPage = await page.context().newPage();
    await payerPage.goto(`${stack.publicUrl}/pay/${op.operation_id}`);
    await expect(payerPage.locator("#status").getAttribute("data-status")).resolves.toBe("manual_check");
    await payerPage.close();

    await page.getByRole("link", { name: "Manual checks" }).click();
    await expect(accessibilityViolations(page)).resolves.toEqual([]);
    await page.getByLabel("Amount that arrived (RUB, to approve)").first().fill("700.00");
    await page.getByRole("button", { name: "Record decision" }).first().click();
    await page.getByText("Decision recorded.").waitFor();
    await pollUntil(() => merchantClient(stack, key).state({ operation_id: op.operation_id }), (res) => res.body?.status === "completed");
    await page.goto(`${stack.adminUrl}/admin/operations/${op.operation_id}`);
    await expect(page.locator("main").textContent()).resolves.toContain("manual_check → completed");
    await expect(page.locator("main").textContent()).resolves.toContain("by admin");
    await screenshot(page, "console-operation");
    await expect(accessibilityViolations(page)).resolves.toEqual([]);
    await page.context().close();
  });

  it("refuses a form post without the session's CSRF token", async () => {
    const page = await signedIn();
    const cookie = (await page.context().cookies()).find((c) => c.name === "pgw_console")!;
    const res = await fetch(`${stack.adminUrl}/admin/merchants`, {
      method: "POST",
      headers: { cookie: `pgw_console=${cookie.value}`, "content-type": "application/x-www-form-urlencoded" },
      body: "name=Forged",
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("This form has expired");
    expect((await admin(stack, "GET", "/admin/api/merchants?q=Forged")).body.items).toEqual([]);
    const signedInPage = await fetch(`${stack.adminUrl}/admin/merchants`, { headers: { cookie: `pgw_console=${cookie.value}` } });
    expect(signedInPage.status).toBe(200);
    expect(signedInPage.headers.get("content-security-policy")).toBe("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
    expect(signedInPage.headers.get("cache-control")).toBe("no-store");
    await page.context().close();
  });

  it("signs in and reaches every section with the keyboard alone, with no accessibility violations on any section", async () => {
    const page = await newPage(browser);
    await page.goto(`${stack.adminUrl}/admin/sign-in`);
    await expect(accessibilityViolations(page)).resolves.toEqual([]);
    await page.keyboard.press("Tab");
    await expect(page.locator(":focus").getAttribute("name")).resolves.toBe("token");
    await page.keyboard.type(ADMIN_TOKEN);
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/admin\/merchants$/);
    const reached: string[] = [];
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press("Tab");
      reached.push(((await page.locator(":focus").textContent()) ?? "").trim());
    }
    expect(reached).toEqual(expect.arrayContaining(["Merchants", "Shops", "Operations", "Manual checks", "Late funds", "Routes and providers", "Operators", "Sign out"]));
    const violations: string[] = [];
    for (const section of ["merchants", "shops", "operations", "manual-checks", "late-funds", "routes", "operators"]) {
      await page.goto(`${stack.adminUrl}/admin/${section}`);
      violations.push(...(await accessibilityViolations(page)).map((v) => `${section}: ${v}`));
    }
    expect(violations).toEqual([]);
    await page.context().close();
  });

  it("says what is wrong with a form in sentences, never JSON, and answers an unknown page with a page", async () => {
    const page = await signedIn();
    const { shopUrl } = await createShop(page, "Errors shop");
    await page.goto(shopUrl);
    await page.getByLabel("Amount (negative debits)").fill("12.345");
    await page.getByLabel("Reason").fill("typo");
    await page.getByRole("button", { name: "Post adjustment" }).click();
    const alert = (await page.getByRole("alert").textContent())!;
    expect(alert).toContain("The amount must have at most 2 decimal places.");
    expect(alert).not.toMatch(/[{}]/);
    const missing = await page.goto(`${stack.adminUrl}/admin/no-such-page`);
    expect(missing?.status()).toBe(404);
    await expect(page.getByRole("alert").textContent()).resolves.toContain("There is no such page in the console.");
    await page.context().close();
  });

  it("creates an operator whose token signs in under their name until another operator revokes them", async () => {
    const page = await signedIn();
    await page.getByRole("link", { name: "Operators" }).click();
    const name = `ops-${Date.now().toString(36)}`;
    await page.getByLabel("Operator name").fill(name);
    await page.getByRole("button", { name: "Create operator" }).click();
    const token = (await page.locator("#revealed-token").textContent())!;
    expect(token).toMatch(/^pgwop_/);

    const theirs = await newPage(browser);
    await theirs.goto(`${stack.adminUrl}/admin/sign-in`);
    await theirs.getByLabel("Operator token (the admin token in local mode)").fill(token);
    await theirs.getByRole("button", { name: "Sign in" }).click();
    await theirs.waitForURL(/\/admin\/merchants$/);
    await expect(theirs.locator("header").textContent()).resolves.toContain(name);

    await page.goto(`${stack.adminUrl}/admin/operators`);
    await page.getByRole("row", { name: new RegExp(name) }).getByRole("link", { name: "Revoke" }).click();
    await page.getByRole("button", { name: `Revoke ${name}` }).click();
    await page.getByText("Operator revoked").waitFor();
    await theirs.goto(`${stack.adminUrl}/admin/operations`);
    await expect(theirs.getByRole("alert").textContent()).resolves.toContain("An operator token is required.");
    await theirs.context().close();
    await page.context().close();
  });

  it("redelivers a webhook from the delivery log and shows an adjustment in the journal", async () => {
    const page = await signedIn();
    const merchant = (await admin(stack, "POST", "/admin/api/merchants", { name: "Hooks" })).body;
    const shop = (await admin(stack, "POST", "/admin/api/shops", { merchant_id: merchant.id, name: "Hooks shop", webhook_url: receiver.url })).body;
    receiver.secrets.push(shop.webhook_secret);
    const key = (await admin(stack, "POST", `/admin/api/shops/${shop.id}/api-keys`, {})).body.api_key;
    const op = (await merchantClient(stack, key).payment({ merchant_operation_id: newMoid("hook"), client_id: "payer", method: "WT_RUB_PHONE", amount: "300.00", currency: "RUB" })).body;
    await sandboxControl(stack).pay(op.operation_id, { amount: "300.00" });
    const first = await pollUntil(() => receiver.successes().find((w) => w.body.includes(op.operation_id)), Boolean);

    await page.goto(`${stack.adminUrl}/admin/shops/${shop.id}`);
    await page.getByRole("cell", { name: "delivered" }).waitFor();
    await page.getByRole("button", { name: /^Redeliver operation\.completed/ }).click();
    await page.getByText("The delivery is sent again now.").waitFor();
    const again = await pollUntil(() => receiver.successes().filter((w) => w.body.includes(op.operation_id)), (hooks) => hooks.length === 2);
    expect(again[1].webhookId).toBe(first!.webhookId);

    await page.getByLabel("Amount (negative debits)").fill("-10.00");
    await page.getByLabel("Reason").fill("chargeback fee");
    await page.getByRole("button", { name: "Post adjustment" }).click();
    await page.getByText("Adjustment posted.").waitFor();
    await expect(page.getByRole("row", { name: /chargeback fee/ }).textContent()).resolves.toContain("-10.00 RUB");
    await page.context().close();
  });
});
