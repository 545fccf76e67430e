/**
 * The deadline of one create: the service's own (spec: up to 15 s for a provider), ended earlier
 * when the caller said it stops waiting (`respond_by_unix_ms`), less a margin for clock skew and
 * the answer's way back. A request read after that point (the process was stalled) must not
 * start: its caller has already been told it failed, and may retry under another key.
 */
export const CALLER_MARGIN_MS = 1000;

/** Milliseconds since the epoch by which the create must be done, or null when it must not start. */
export function createDeadline(now: number, ownMs: number, respondByUnixMs: number): number | null {
  const own = now + ownMs;
  const deadline = respondByUnixMs > 0 ? Math.min(own, respondByUnixMs - CALLER_MARGIN_MS) : own;
  return deadline > now ? deadline : null;
}
