/**
 * The hosted checkout in a real browser (Debian's Chromium through playwright-core): every state a
 * payer can meet, reached through the sandbox provider's control API and the merchant API, each
 * saved as a screenshot among the test artefacts and checked with axe; the status changing without
 * a reload, the countdown, copying, refused uploads in the payer's words, Russian, a phone's screen,
 * and the page without script.
 */
import type { Browser, BrowserContextOptions, Page } from "playwright-core";
import { NOT_A_PDF, PNG_1X1 } from "../../services/receipts/test/receipt-pdfs";
import { accessibilityViolations, launchBrowser, newPage, screenshot } from "../../test/support/browser";
import { merchantClient, newMoid, sandboxControl } from "../../test/support/merchant";
import { createShopWithKey, startStack, type Stack } from "../../test/support/stack";

const PLAIN_METHOD = "WT_RUB_PHONE"; // paid at the provider, no receipt
const RECEIPT_METHOD = "WT_RUB_C2C"; // the route asks the payer for a receipt
const MiB = 1024 * 1024;
/** Longer than the page's status poll (STATUS_POLL_MS) with room for a loaded machine. */
const LIVE_TIMEOUT_MS = 20_000;

let stack: Stack;
let browser: Browser;
let m: ReturnType<typeof merchantClient>;
let sandbox: ReturnType<typeof sandboxControl>;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startStack(), launchBrowser()]);
  m = merchantClient(stack, (await createShopWithKey(stack, { checkout_enabled: true })).apiKey);
  sandbox = sandboxControl(stack);
  await sandbox.scenario({ method: PLAIN_METHOD, accept: "accept", expires_in_s: 900 });
  await sandbox.scenario({ method: RECEIPT_METHOD, accept: "accept", requires_receipt: true, expires_in_s: 900 });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** A payment link on `method`; answers the operation as created. */
async function paymentLink(method: string, amount = "1500.00") {
  const created = await m.paymentLink({ merchant_operation_id: newMoid("checkout"), client_id: "payer-1", method, amount, currency: "RUB" });
  expect(created.status).toBe(200);
  return created.body as { operation_id: string; payment_url: string; status: string; number: string; name: string; expires_at?: string };
}

/** Opens `url` in a fresh context; the caller closes it (`page.context().close()`). */
async function open(url: string, options: BrowserContextOptions = {}): Promise<Page> {
  const page = await newPage(browser, options);
  const res = await page.goto(url);
  expect(res?.status()).toBeLessThan(500);
  return page;
}

/** Sends the receipt form with `file` and waits for the page it leads to. */
async function sendReceipt(page: Page, file: { name: string; mimeType: string; buffer: Buffer }) {
  await page.getByLabel("Receipt of your transfer").setInputFiles(file);
  await Promise.all([page.waitForEvent("framenavigated"), page.getByRole("button", { name: "Send receipt" }).click()]);
  await page.waitForLoadState("load");
}

const statusOf = (page: Page) => page.locator("#status").getAttribute("data-status");
const textOf = (page: Page, selector: string) => page.locator(selector).textContent();

/** Saves the page as `checkout-<name>.png` and answers its accessibility violations. */
async function record(page: Page, name: string): Promise<string[]> {
  await screenshot(page, `checkout-${name}`);
  return accessibilityViolations(page);
}

describe("hosted checkout in a browser", () => {
  it("awaiting payment: amount, requisites with copy buttons and a countdown; paid appears without a reload", async () => {
    const op = await paymentLink(PLAIN_METHOD);
    expect(op.expires_at).toEqual(expect.any(String));
    const page = await open(op.payment_url);
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: stack.publicUrl });
    await expect(statusOf(page)).resolves.toBe("pending");
    await expect(textOf(page, "#status")).resolves.toBe("Awaiting payment");
    await expect(textOf(page, "#amount")).resolves.toBe("1500.00");
    await expect(textOf(page, "#number")).resolves.toBe(op.number);
    await expect(textOf(page, "#recipient")).resolves.toBe(op.name);
    // The script replaced the expiry time with what is left of it (about 15 minutes).
    await expect(textOf(page, "#countdown")).resolves.toMatch(/^1[45]:\d\d$/);
    expect(await record(page, "awaiting-payment")).toEqual([]);

    const copy = page.locator('button[data-copy="number"]');
    await copy.click();
    await copy.filter({ hasText: "Copied" }).waitFor(); // once the clipboard took it
    await expect(page.evaluate("navigator.clipboard.readText()")).resolves.toBe(op.number);

    await page.evaluate("globalThis.loadedOnce = true");
    expect((await sandbox.pay(op.operation_id, { amount: "1500.00" })).status).toBe(200);
    await page.locator('#status[data-status="completed"]').waitFor({ timeout: LIVE_TIMEOUT_MS });
    await expect(textOf(page, "#status")).resolves.toBe("Paid");
    await expect(page.evaluate("globalThis.loadedOnce")).resolves.toBe(true); // the same document: no reload
    await expect(page.locator("#number, #countdown, button.copy").count()).resolves.toBe(0); // nothing left to pay into
    expect(await record(page, "paid")).toEqual([]);
    await page.context().close();
  });

  it("awaiting receipt: refuses a wrong type and a too-large file in the payer's words, then reviews an image", async () => {
    const op = await paymentLink(RECEIPT_METHOD);
    expect(op.status).toBe("awaiting_confirmation");
    const page = await open(op.payment_url);
    await expect(textOf(page, "#status")).resolves.toBe("Awaiting your receipt");
    await expect(page.locator("#countdown").count()).resolves.toBe(1);
    expect(await record(page, "awaiting-receipt")).toEqual([]);

    await sendReceipt(page, { name: "receipt.docx", mimeType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", buffer: NOT_A_PDF });
    await expect(page.getByRole("alert").textContent()).resolves.toBe("This type of file is not accepted. Upload the receipt as a PDF, JPEG or PNG file.");
    expect(await record(page, "upload-wrong-type")).toEqual([]);
    await sendReceipt(page, { name: "receipt.pdf", mimeType: "application/pdf", buffer: Buffer.alloc(10 * MiB + 1, 0x20) });
    await expect(page.getByRole("alert").textContent()).resolves.toBe("The file is larger than 10 MB. Upload a smaller file or a screenshot of the receipt.");

    await sendReceipt(page, { name: "receipt.png", mimeType: "image/png", buffer: PNG_1X1 });
    await expect(statusOf(page)).resolves.toBe("manual_check"); // an image is never enough on its own
    await expect(textOf(page, "#status")).resolves.toBe("Under review");
    await expect(page.locator("form, .problem").count()).resolves.toBe(0);
    expect(new URL(page.url()).pathname).toBe(`/pay/${op.operation_id}`);
    expect(await record(page, "under-review")).toEqual([]);
    await page.context().close();
  });

  it.each([
    ["declined", "Declined", (id: string) => sandbox.decline(id)],
    ["expired", "Expired", (id: string) => sandbox.expire(id)],
    ["cancelled", "Cancelled", (id: string) => m.cancel({ operation_id: id })],
  ])("%s: says so and shows no requisites", async (status, title, reach) => {
    const op = await paymentLink(PLAIN_METHOD);
    expect((await reach(op.operation_id)).status).toBe(200);
    await expect(m.waitForStatus(op.operation_id, status)).resolves.toMatchObject({ body: { status } });
    const page = await open(op.payment_url);
    await expect(statusOf(page)).resolves.toBe(status);
    await expect(textOf(page, "#status")).resolves.toBe(title);
    await expect(page.locator("#number, #countdown, form, button.copy").count()).resolves.toBe(0);
    expect(await record(page, status)).toEqual([]);
    await page.context().close();
  });

  it("not found: an unknown link", async () => {
    const page = await newPage(browser);
    const res = await page.goto(`${stack.publicUrl}/pay/00000000-0000-4000-8000-000000000000`);
    expect(res?.status()).toBe(404);
    await expect(page.locator("h1").textContent()).resolves.toBe("Payment not found");
    expect(await record(page, "not-found")).toEqual([]);
    await page.context().close();
  });

  it("speaks Russian to a browser that asks for it", async () => {
    const op = await paymentLink(RECEIPT_METHOD);
    const page = await open(op.payment_url, { locale: "ru-RU" });
    await expect(page.locator("html").getAttribute("lang")).resolves.toBe("ru");
    await expect(textOf(page, "#status")).resolves.toBe("Ожидаем чек");
    await expect(page.getByRole("button", { name: "Отправить чек" }).count()).resolves.toBe(1);
    expect(await record(page, "ru")).toEqual([]);
    await page.context().close();
  });

  it("fits a phone's screen", async () => {
    const op = await paymentLink(RECEIPT_METHOD);
    const page = await open(op.payment_url, { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
    await expect(page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")).resolves.toBe(true);
    const submit = await page.getByRole("button", { name: "Send receipt" }).boundingBox();
    expect(submit!.height).toBeGreaterThanOrEqual(44); // a finger-sized target
    expect(await record(page, "mobile")).toEqual([]);
    await page.context().close();
  });

  it("works without script: the status at load, and the form posts", async () => {
    const op = await paymentLink(RECEIPT_METHOD);
    const page = await open(op.payment_url, { javaScriptEnabled: false });
    await expect(textOf(page, "#countdown")).resolves.toMatch(/^until \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    await expect(page.getByRole("button", { name: "Copy" }).count()).resolves.toBe(0); // hidden: they need the script
    await sendReceipt(page, { name: "receipt.png", mimeType: "image/png", buffer: PNG_1X1 });
    expect(page.url()).toBe(op.payment_url);
    await expect(statusOf(page)).resolves.toBe("manual_check");
    await page.context().close();
  });
});
