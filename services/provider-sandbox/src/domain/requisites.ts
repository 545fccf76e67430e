import type { Method } from "./methods";

/** Where a payer sends money (pay-in) or where a payout goes. */
export interface Requisites {
  number: string;
  name: string;
  bankname?: string;
}

const HOLDERS = ["IVAN PETROV", "ANNA SMIRNOVA", "OLEG IVANOV", "MARIA KUZNETSOVA"];
/** Bank codes handed out; stable lowercase slugs as in the gateway's RUB bank dictionary. */
export const SANDBOX_BANKS = ["sberbank", "tbank", "alfabank", "vtb"];
/** Card prefix of the requisites handed out (a Mir BIN). */
const CARD_PREFIX = "2202";

/** The Luhn check digit that completes `payload` (a string of digits). */
export function luhnCheckDigit(payload: string): string {
  let sum = 0;
  for (let i = 0; i < payload.length; i++) {
    let d = Number(payload[payload.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
}

/** Whether `number` is a string of digits whose last digit is its Luhn check digit. */
export function isLuhnValid(number: string): boolean {
  return /^\d{2,}$/.test(number) && luhnCheckDigit(number.slice(0, -1)) === number.slice(-1);
}

/** `count` decimal digits drawn from `seed` bytes (deterministic). */
function digitsOf(seed: Uint8Array, count: number): string {
  let out = "";
  for (let i = 0; i < count; i++) out += String(seed[i % seed.length] % 10);
  return out;
}

/**
 * The requisites handed out for a pay-in of `method`, derived from `seed` (e.g. a hash of the
 * operation id) so the same operation always gets the same ones: a Luhn-valid 16-digit card for
 * WT_RUB_C2C, a +79… phone for WT_RUB_PHONE; each with a holder name and a bank code.
 */
export function requisitesFor(method: Method, seed: Uint8Array): Requisites {
  const name = HOLDERS[seed[0] % HOLDERS.length];
  const bankname = SANDBOX_BANKS[seed[1] % SANDBOX_BANKS.length];
  const digits = digitsOf(seed.subarray(2), 11);
  if (method === "WT_RUB_PHONE") return { number: `+79${digits.slice(0, 9)}`, name, bankname };
  const payload = CARD_PREFIX + digits;
  return { number: payload + luhnCheckDigit(payload), name, bankname };
}
