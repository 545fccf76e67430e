import type { Browser } from "playwright-core";
import { accessibilityViolations, launchBrowser, newPage, screenshot } from "../../test/support/browser";
import { merchantClient, newMoid, sandboxControl } from "../../test/support/merchant";
import { createShopWithKey, startStack, type Stack } from "../../test/support/stack";

let stack: Stack;
let browser: Browser;
let m: ReturnType<typeof merchantClient>;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startStack(), launchBrowser()]);
  m = merchantClient(stack, (await createShopWithKey(stack, { checkout_enabled: true })).apiKey);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe("hosted checkout in a browser", () => {
  it("shows a pending payment's amount, requisites and status, with no accessibility violations", async () => {
    await sandboxControl(stack).scenario({ method: "WT_RUB_PHONE", accept: "accept" });
    const created = await m.paymentLink({ merchant_operation_id: newMoid(), client_id: "c-1", method: "WT_RUB_PHONE", amount: "1500.00", currency: "RUB" });
    expect(created.status).toBe(200);
    const page = await newPage(browser);
    await page.goto(created.body.payment_url);
    await expect(page.locator("dd", { hasText: "1500.00 RUB" }).count()).resolves.toBe(1);
    await expect(page.locator("#status").getAttribute("data-status")).resolves.toBe("pending");
    await expect(page.locator("dd", { hasText: created.body.number }).count()).resolves.toBe(1);
    await screenshot(page, "checkout-pending");
    await expect(accessibilityViolations(page)).resolves.toEqual([]);
    await page.context().close();
  });

  it("answers an unknown link with a not-found page", async () => {
    const page = await newPage(browser);
    const res = await page.goto(`${stack.publicUrl}/pay/00000000-0000-4000-8000-000000000000`);
    expect(res?.status()).toBe(404);
    await expect(page.locator("h1").textContent()).resolves.toBe("Payment not found");
    await page.context().close();
  });
});
