import { AppError, isCurrency, Money, parseRequestAmount, type ErrorDetail, isUuid } from "@pgw/contracts";

/** Parses one field value: the value, or the issue that makes it invalid. */
export type Parser<T> = (value: unknown) => { ok: true; value: T } | { ok: false; issue: string };

const ok = <T>(value: T) => ({ ok: true as const, value });
const bad = (issue: string) => ({ ok: false as const, issue });

/** Places a paid amount may have: what the sandbox's columns hold. */
const PAID_AMOUNT_SCALE = 18;
const PAID_AMOUNT = new RegExp(`^(0|[1-9]\\d{0,17})(\\.\\d{1,${PAID_AMOUNT_SCALE}})?$`);
const parsePaidAmount = (v: unknown): Money | null => (typeof v === "string" && PAID_AMOUNT.test(v) && new Money(v).gt(0) ? new Money(v) : null);


/** Field parsers of the sandbox's request bodies. */
export const parse = {
  text: ((v) => (typeof v === "string" && v.trim() !== "" ? ok(v) : bad("must be a non-empty string"))) as Parser<string>,
  anyText: ((v) => (typeof v === "string" ? ok(v) : bad("must be a string"))) as Parser<string>,
  uuid: ((v) => (isUuid(v) ? ok(v.toLowerCase()) : bad("must be a UUID"))) as Parser<string>,
  currency: ((v) => (isCurrency(v) ? ok(v) : bad("must be a supported currency"))) as Parser<string>,
  bool: ((v) => (typeof v === "boolean" ? ok(v) : bad("must be true or false"))) as Parser<boolean>,
  url: ((v) => {
    try {
      return typeof v === "string" && ["http:", "https:"].includes(new URL(v).protocol) ? ok(v) : bad("must be an http(s) URL");
    } catch {
      return bad("must be an http(s) URL");
    }
  }) as Parser<string>,
  amount: ((v) => {
    const amount = parseRequestAmount(v);
    return amount ? ok(amount) : bad("must be a positive decimal string with at most 2 places");
  }) as Parser<Money>,
  /** What a payer paid or a payout paid out: any positive decimal, reported as is (a test may send more places than the currency holds). */
  paidAmount: ((v) => {
    const amount = parsePaidAmount(v);
    return amount ? ok(amount) : bad(`must be a positive decimal string with at most ${PAID_AMOUNT_SCALE} places`);
  }) as Parser<Money>,
  paidAmounts: ((v) => {
    if (!Array.isArray(v) || v.length === 0) return bad("must be a non-empty array of amounts");
    const amounts = v.map(parsePaidAmount);
    return amounts.every((a) => a !== null) ? ok(amounts as Money[]) : bad(`every leg must be a positive decimal string with at most ${PAID_AMOUNT_SCALE} places`);
  }) as Parser<Money[]>,
  oneOf:
    <T extends string>(values: readonly T[]): Parser<T> =>
    (v) =>
      typeof v === "string" && (values as readonly string[]).includes(v) ? ok(v as T) : bad(`must be one of ${values.join(", ")}`),
  int:
    (min: number, max: number): Parser<number> =>
    (v) =>
      typeof v === "number" && Number.isInteger(v) && v >= min && v <= max ? ok(v) : bad(`must be an integer from ${min} to ${max}`),
};

/**
 * Reads the fields of a JSON body, collecting one issue per bad field; `done()` throws them all as
 * one `validation_error`. A required getter's value is only meaningful once `done()` passed.
 */
export class BodyReader {
  private readonly fields: Record<string, unknown>;

  constructor(
    body: unknown,
    private readonly prefix = "",
    readonly details: ErrorDetail[] = [],
  ) {
    const isObject = typeof body === "object" && body !== null && !Array.isArray(body);
    if (!isObject) details.push({ field: prefix.replace(/\.$/, "") || "body", issue: "must be a JSON object" });
    this.fields = isObject ? (body as Record<string, unknown>) : {};
  }

  /** The field parsed, or undefined when it is absent (null counts as absent) or invalid. */
  optional<T>(field: string, parser: Parser<T>): T | undefined {
    const value = this.fields[field];
    if (value === undefined || value === null) return undefined;
    const result = parser(value);
    if (result.ok) return result.value;
    this.details.push({ field: this.prefix + field, issue: result.issue });
    return undefined;
  }

  /** The field parsed; records `is required` when absent. */
  required<T>(field: string, parser: Parser<T>): T {
    const value = this.fields[field];
    if (value === undefined || value === null) this.details.push({ field: this.prefix + field, issue: "is required" });
    return this.optional(field, parser) as T;
  }

  /** A reader of the nested object `field`, reporting into the same details. */
  nested(field: string): BodyReader {
    return new BodyReader(this.fields[field], `${this.prefix}${field}.`, this.details);
  }

  /** Throws `validation_error` with every issue found, if any. */
  done(): void {
    if (this.details.length > 0) throw new AppError("validation_error", "request body is invalid", this.details);
  }
}
