import { Money } from "@pgw/contracts";
import { completionFigures, type SettlingOperation } from "./completion-figures";

const op = (over: Partial<SettlingOperation> = {}): SettlingOperation => ({
  id: "op-1",
  type: "payment",
  currency: "RUB",
  settlementCurrency: "RUB",
  fxRate: null,
  tariffPercent: new Money("2.5"),
  tariffFixed: new Money("0"),
  tariffMinimum: new Money("0"),
  ...over,
});

describe("a completion's figures", () => {
  // operation, captured amount → recorded, commission, settlement (the ledger's Quote for the same tariff)
  it.each<[string, SettlingOperation, string, string, string, string]>([
    ["payment in RUB", op(), "1000.00", "1000.00", "25.00", "975.00"],
    ["payment captured short", op(), "3.00", "3.00", "0.08", "2.92"],
    ["payout with fixed part", op({ type: "payout", tariffPercent: new Money("1.5"), tariffFixed: new Money("15") }), "1000.00", "1000.00", "30.00", "1030.00"],
    ["payment converted to USDT", op({ settlementCurrency: "USDT", fxRate: new Money("0.010869565") }), "1000.00", "10.869565", "0.271739", "10.597826"],
    ["payout converted to USDT", op({ type: "payout", tariffPercent: new Money("1.5"), settlementCurrency: "USDT", fxRate: new Money("0.010869565") }), "1000.00", "10.869565", "0.163043", "11.032608"],
    ["payment under its minimum", op({ tariffPercent: new Money("1"), tariffMinimum: new Money("10") }), "5.00", "5.00", "5.00", "0.00"],
  ])("%s", (_name, operation, actual, recordedAmount, commissionAmount, settlementAmount) => {
    const settlementCurrency = operation.settlementCurrency!;
    expect(completionFigures(operation, actual)).toEqual({ recordedAmount, commissionAmount, settlementAmount, settlementCurrency });
  });

  it("is unknown for an operation created before its tariff was kept", () => {
    expect(completionFigures(op({ tariffPercent: null, tariffFixed: null, tariffMinimum: null }), "100.00")).toBeNull();
    expect(completionFigures(op({ tariffMinimum: null }), "100.00")).toBeNull();
  });

  it("refuses a conversion without its rate, as the ledger's Quote does", () => {
    expect(() => completionFigures(op({ settlementCurrency: "USDT" }), "100.00")).toThrow(/fx_rate/);
  });
});
