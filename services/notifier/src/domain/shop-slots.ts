/**
 * How many attempts one shop may have in flight in a worker. A shop whose last attempt got no
 * answer (a timeout or a refused connection) or answered only after half the timeout probably has a
 * dead or hanging endpoint: it keeps a couple of slots, enough to notice when the endpoint recovers,
 * and leaves the rest to shops whose endpoints answer. Without this, a handful of dead endpoints
 * with retries due would fill every slot of the worker for a whole timeout at a time.
 */
export const STRUGGLING_SHOP_CONCURRENCY = 2;

export function shopSlotCap(perShopConcurrency: number, struggling: boolean): number {
  return struggling ? Math.min(perShopConcurrency, STRUGGLING_SHOP_CONCURRENCY) : perShopConcurrency;
}

/** Whether an attempt's outcome marks its shop's endpoint as struggling (a prompt answer clears it). */
export function attemptStruggled(statusCode: number | undefined, latencyMs: number, timeoutMs: number): boolean {
  return statusCode === undefined || latencyMs >= timeoutMs / 2;
}
