import { AppError, Money } from "@pgw/contracts";
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
    ["https://user:pw@merchant.example/hooks", false, ["webhook_url"]],
    ["http://user@127.0.0.1:3000/hooks", true, ["webhook_url"]],
    // IP literals the notifier would refuse at every delivery (private, loopback, metadata).
    ["https://10.1.2.3/hooks", false, ["webhook_url"]],
    ["https://[::1]/hooks", false, ["webhook_url"]],
    ["https://169.254.169.254/latest", false, ["webhook_url"]],
    ["https://8.8.8.8/hooks", false, []],
    ["http://10.1.2.3/hooks", true, []],
    [null, false, []],
  ])("webhook_url %j (local mode %s)", (webhookUrl, localMode, expected) => {
    expect(fields(() => validateShopSettings({ webhookUrl }, false, localMode))).toEqual(expected);
  });

  it("says why a webhook URL is refused", () => {
    try {
      validateShopSettings({ webhookUrl: "https://192.168.0.10/hooks" }, false, false);
      throw new Error("accepted");
    } catch (e) {
      expect((e as AppError).details).toEqual([{ field: "webhook_url", issue: "destination address 192.168.0.10 is not allowed" }]);
    }
  });

  it("names every bad field", () => {
    expect(fields(() => validateShopSettings({ name: "", settlementCurrency: "EUR", overdraftLimit: "-1", rateLimitRps: 0 }, true))).toEqual([
      "name",
      "overdraft_limit",
      "rate_limit_rps",
      "settlement_currency",
    ]);
  });

  it.each([
    ["10.12", undefined, undefined, []],
    ["10.123", undefined, undefined, ["overdraft_limit"]], // a new shop settles in RUB: 2 places
    ["10.123456", "USDT", undefined, []],
    ["10.1234567", "USDT", undefined, ["overdraft_limit"]],
    ["10.123456", undefined, { settlementCurrency: "USDT", overdraftLimit: new Money(0) }, []],
    ["10.123", "RUB", { settlementCurrency: "USDT", overdraftLimit: new Money(0) }, ["overdraft_limit"]],
  ])("overdraft_limit %j with settlement_currency %j (current %j) has the places of the settlement currency", (overdraftLimit, settlementCurrency, current, expected) => {
    expect(fields(() => validateShopSettings({ overdraftLimit, settlementCurrency }, false, false, current))).toEqual(expected);
  });

  it("a change of settlement currency restates a non-zero overdraft limit, which is in that currency", () => {
    const rubLimit = { settlementCurrency: "RUB", overdraftLimit: new Money("1000") };
    expect(fields(() => validateShopSettings({ settlementCurrency: "USDT" }, false, false, rubLimit))).toEqual(["overdraft_limit"]);
    expect(fields(() => validateShopSettings({ settlementCurrency: "USDT", overdraftLimit: "10" }, false, false, rubLimit))).toEqual([]);
    expect(fields(() => validateShopSettings({ settlementCurrency: "RUB" }, false, false, rubLimit))).toEqual([]); // no change
    expect(fields(() => validateShopSettings({ settlementCurrency: "USDT" }, false, false, { settlementCurrency: "RUB", overdraftLimit: new Money(0) }))).toEqual([]);
  });
});
