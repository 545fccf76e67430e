/** A bank of the RUB dictionary: `code` is what `bankname` accepts, `name` is `bankname_details`. */
export interface Bank {
  code: string;
  name: string;
}

/**
 * The RUB bank dictionary: the main Russian banks (SBP participants) with stable lowercase codes.
 * Codes never change once published; names may be refreshed.
 */
const RUB_BANKS: readonly Bank[] = [
  { code: "sberbank", name: "Сбербанк" },
  { code: "tbank", name: "Т-Банк" },
  { code: "vtb", name: "Банк ВТБ" },
  { code: "alfabank", name: "Альфа-Банк" },
  { code: "gazprombank", name: "Газпромбанк" },
  { code: "raiffeisen", name: "Райффайзенбанк" },
  { code: "rosbank", name: "Росбанк" },
  { code: "sovcombank", name: "Совкомбанк" },
  { code: "psb", name: "Промсвязьбанк" },
  { code: "mkb", name: "Московский кредитный банк" },
  { code: "pochtabank", name: "Почта Банк" },
  { code: "rshb", name: "Россельхозбанк" },
  { code: "uralsib", name: "Банк Уралсиб" },
  { code: "akbars", name: "Ак Барс Банк" },
  { code: "mtsbank", name: "МТС Банк" },
  { code: "ozonbank", name: "Озон Банк" },
  { code: "homecredit", name: "Хоум Банк" },
  { code: "rsb", name: "Банк Русский Стандарт" },
  { code: "otpbank", name: "ОТП Банк" },
  { code: "yoomoney", name: "ЮMoney" },
];

const DICTIONARIES: Readonly<Record<string, readonly Bank[]>> = { RUB: RUB_BANKS };

/** The dictionary of a currency (empty when the currency has none). */
export function banksOf(currency: string): readonly Bank[] {
  return DICTIONARIES[currency] ?? [];
}

/** The bank with this code in the currency's dictionary. */
export function findBank(currency: string, code: string): Bank | undefined {
  return banksOf(currency).find((b) => b.code === code);
}
