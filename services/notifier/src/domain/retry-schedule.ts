/**
 * When a webhook delivery is attempted: the Standard Webhooks schedule. Entry i is the delay before
 * attempt i + 1, counted from the previous attempt (the first is immediate). About 3 days in all.
 */
const S = 1000;
const M = 60 * S;
const H = 60 * M;

export const STANDARD_RETRY_SCHEDULE_MS: readonly number[] = [0, 5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 14 * H, 20 * H, 24 * H];

/** Share of each delay added or taken away at random, so retries of many messages spread out. */
export const RETRY_JITTER = 0.1;

/**
 * Parses a schedule written as comma-separated milliseconds (e.g. "0,50,200"). Throws on anything
 * but a non-empty list of non-negative integers.
 */
export function parseRetrySchedule(text: string): number[] {
  const parts = text.split(",").map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => !/^\d{1,12}$/.test(p))) {
    throw new Error("must be comma-separated non-negative integers (milliseconds)");
  }
  return parts.map(Number);
}

/**
 * Delay before the next attempt once `attemptsDone` attempts of the current round have failed, or
 * null when the schedule is exhausted (the delivery has failed). `random` is a value in [0, 1).
 */
export function nextRetryDelayMs(schedule: readonly number[], attemptsDone: number, random: number): number | null {
  if (attemptsDone >= schedule.length) return null;
  const base = schedule[Math.max(attemptsDone, 0)];
  return Math.max(0, Math.round(base * (1 + RETRY_JITTER * (2 * random - 1))));
}

/** Total span of the schedule (without jitter): how long a message is retried before it fails. */
export function retryHorizonMs(schedule: readonly number[]): number {
  return schedule.reduce((a, b) => a + b, 0);
}
