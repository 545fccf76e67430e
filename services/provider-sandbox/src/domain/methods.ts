/** Payment methods the sandbox serves: the public ones, card and phone transfers in RUB (docs/api.md, Endpoints). */
export const METHODS = ["WT_RUB_C2C", "WT_RUB_PHONE"] as const;
export type Method = (typeof METHODS)[number];

/** Whether `value` names a method the sandbox serves. */
export function isMethod(value: unknown): value is Method {
  return typeof value === "string" && (METHODS as readonly string[]).includes(value);
}
