/** Luhn checksum of a digit string. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** A card number: 16–19 digits (spaces allowed between groups), Luhn-valid; null otherwise. */
export function normalizeCardNumber(value: string): string | null {
  const digits = value.replace(/ /g, "");
  return /^\d{16,19}$/.test(digits) && luhnValid(digits) ? digits : null;
}

/**
 * A phone number: E.164 (`+` and 8–15 digits) or an 11-digit Russian number starting with 7 or 8;
 * answered in E.164; null otherwise.
 */
export function normalizePhone(value: string): string | null {
  const compact = value.replace(/[\s()-]/g, "");
  if (/^\+[1-9]\d{7,14}$/.test(compact)) return compact;
  if (/^[78]\d{10}$/.test(compact)) return `+7${compact.slice(1)}`;
  return null;
}
