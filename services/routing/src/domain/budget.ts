/**
 * The allocation budget: one deadline for the whole Allocate, shared by every provider attempt.
 */

/** Below this much time left, another provider attempt is not started. */
export const MIN_ATTEMPT_MS = 50;

/** A deadline measured on an injectable clock (milliseconds). */
export class Budget {
  private readonly deadline: number;

  constructor(
    totalMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.deadline = now() + Math.max(0, totalMs);
  }

  /** Milliseconds left, never negative. */
  remaining(): number {
    return Math.max(0, this.deadline - this.now());
  }

  /**
   * Timeout of the next provider attempt: the provider's own timeout capped by what is left, or
   * null when too little is left to start one. The last candidate gets all that is left: no other
   * provider could use the rest, and the caller grants up to the whole budget (15 s: docs/api.md,
   * Endpoints) to a provider that is slow to accept.
   */
  attemptTimeout(providerTimeoutMs: number, lastCandidate = false): number | null {
    const left = this.remaining();
    if (left < MIN_ATTEMPT_MS) return null;
    return lastCandidate ? left : Math.min(Math.max(1, providerTimeoutMs), left);
  }
}

/** The budget an Allocate runs under: the caller's, or the configured default when it sent none. */
export function budgetMs(requested: number, fallbackMs: number): number {
  return requested > 0 ? requested : fallbackMs;
}
