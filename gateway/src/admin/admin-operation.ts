import { maskCardNumber, operationJson } from "@pgw/contracts";
import type { Operation } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";

/**
 * An operation as the admin API shows it: the public object with its card number (a payout's
 * destination, a payment's requisites) masked to the first six and last four digits. Operators
 * never need the whole number, which only the merchant's API returns; a phone number stays whole.
 */
export function adminOperationJson(op: Operation): Record<string, unknown> {
  const json = operationJson(op);
  if (op.number) json.number = maskCardNumber(op.number);
  return json;
}
