/** Start-up seed: the sandbox provider, its default routes (only when it has none) and FX rates. */
import type { Logger } from "@pgw/kit";
import { DEFAULT_FX_RATES, DEFAULT_FX_SOURCE, defaultRoutes } from "../domain/default-routes";
import { seedFxRates, seedRoutesIfNone, upsertProvider, type Db } from "./allocations";

export const SANDBOX_PROVIDER_CODE = "sandbox";

/** Idempotent; replicas may run it at once. `sandbox.callbackSecret` as stored: sealed. */
export async function seedDefaults(db: Db, log: Logger, sandbox: { baseUrl: string; callbackSecret: string; timeoutMs: number }): Promise<void> {
  const providerId = await upsertProvider(db, { code: SANDBOX_PROVIDER_CODE, name: "Provider sandbox", connector: "sandbox", ...sandbox });
  const added = await seedRoutesIfNone(db, providerId, defaultRoutes());
  await seedFxRates(db, DEFAULT_FX_SOURCE, DEFAULT_FX_RATES);
  if (added > 0) log.info({ provider: SANDBOX_PROVIDER_CODE, routes: added }, "default routes seeded");
}
