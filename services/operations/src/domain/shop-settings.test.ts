import { AppError } from "@pgw/kit";
import { validateShopSettings } from "./shop-settings";

const fields = (fn: () => void) => {
  try {
    fn();
    return [];
  } catch (e) {
    return (e as AppError).details.map((d) => d.field).sort();
  }
};

describe("shop settings", () => {
  it.each([
    ["https://merchant.example/hooks", false, []],
    ["http://merchant.example/hooks", false, ["webhook_url"]],
    ["http://127.0.0.1:3000/hooks", true, []],
    ["ftp://merchant.example", true, ["webhook_url"]],
    ["not a url", true, ["webhook_url"]],
    ["", true, ["webhook_url"]],
    [null, false, []],
  ])("webhook_url %j (local mode %s)", (webhookUrl, localMode, expected) => {
    expect(fields(() => validateShopSettings({ webhookUrl }, false, localMode))).toEqual(expected);
  });

  it("names every bad field", () => {
    expect(fields(() => validateShopSettings({ name: "", settlementCurrency: "EUR", overdraftLimit: "-1", rateLimitRps: 0 }, true))).toEqual([
      "name",
      "overdraft_limit",
      "rate_limit_rps",
      "settlement_currency",
    ]);
  });
});
