/**
 * The deadline of one create: the service's own (up to 15 s for a provider: docs/api.md,
 * Endpoints), ended earlier when the caller stops waiting, said by `respond_by_unix_ms` or by the
 * call's gRPC deadline (internal callers may set only that), less a margin for clock skew and the
 * answer's way back.
 * A request read after that point (the process was stalled) must not start: its caller has
 * already been told it failed, and may retry under another key.
 */
export const CALLER_MARGIN_MS = 1000;

/**
 * Milliseconds since the epoch by which the create must be done, or null when it must not start.
 * `respondByUnixMs` 0 and `callTimeoutMs` undefined mean the caller did not say.
 */
export function createDeadline(now: number, ownMs: number, respondByUnixMs: number, callTimeoutMs?: number): number | null {
  const callerLimits = [respondByUnixMs > 0 ? respondByUnixMs : Infinity, callTimeoutMs === undefined ? Infinity : now + callTimeoutMs];
  const deadline = Math.min(now + ownMs, Math.min(...callerLimits) - CALLER_MARGIN_MS);
  return deadline > now ? deadline : null;
}
