/**
 * What one delivery attempt means for the delivery: any 2xx is delivered; 410 Gone disables the
 * endpoint; anything else (other status, no answer, refused destination) is retried on the schedule
 * and fails once the schedule is exhausted.
 */
import { nextRetryDelayMs } from "./retry-schedule";

export type AttemptDecision =
  | { kind: "delivered" }
  | { kind: "disabled" }
  | { kind: "retry"; delayMs: number }
  | { kind: "failed" };

/**
 * @param statusCode HTTP status of the answer, undefined when none arrived
 * @param roundAttempts attempts of the current round including this one
 */
export function decideAfterAttempt(statusCode: number | undefined, roundAttempts: number, schedule: readonly number[], random: number): AttemptDecision {
  if (statusCode !== undefined && statusCode >= 200 && statusCode < 300) return { kind: "delivered" };
  if (statusCode === 410) return { kind: "disabled" };
  const delayMs = nextRetryDelayMs(schedule, roundAttempts, random);
  return delayMs === null ? { kind: "failed" } : { kind: "retry", delayMs };
}
