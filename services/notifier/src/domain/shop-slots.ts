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

/**
 * The slots free in a worker for each shop that has fewer than an idle shop's `perShopConcurrency`:
 * the shops with attempts in flight (`inFlight`, by shop) and those struggling. A shop with none
 * free (0) is left out of the claim; a shop not listed may take `perShopConcurrency`.
 */
export function shopsWithFewerSlots(perShopConcurrency: number, inFlight: ReadonlyMap<string, number>, struggling: ReadonlySet<string>): Map<string, number> {
  const free = new Map<string, number>();
  for (const shopId of new Set([...inFlight.keys(), ...struggling])) {
    free.set(shopId, Math.max(0, shopSlotCap(perShopConcurrency, struggling.has(shopId)) - (inFlight.get(shopId) ?? 0)));
  }
  return free;
}

/** Whether an attempt's outcome marks its shop's endpoint as struggling (a prompt answer clears it). */
export function attemptStruggled(statusCode: number | undefined, latencyMs: number, timeoutMs: number): boolean {
  return statusCode === undefined || latencyMs >= timeoutMs / 2;
}
