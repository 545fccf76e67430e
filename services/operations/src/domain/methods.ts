/** Logical payment methods and the currency their destinations belong to. */
export const METHODS = {
  WT_RUB_C2C: { destinationCurrency: "RUB", destination: "card" },
  WT_RUB_PHONE: { destinationCurrency: "RUB", destination: "phone" },
} as const;

export type Method = keyof typeof METHODS;

export function isMethod(value: string): value is Method {
  return Object.prototype.hasOwnProperty.call(METHODS, value);
}
