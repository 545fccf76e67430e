/**
 * Start-up seed (SEED_SANDBOX): the sandbox provider, its default routes (only when it has none)
 * and FX rates. Configuration written once before the unit serves, not a background task, hence
 * here beside the statements it runs rather than under jobs/.
 */
import { randomUUID } from "node:crypto";
import { DEFAULT_FX_RATES, DEFAULT_FX_SOURCE, defaultRoutes, type DefaultRoute } from "../domain/default-routes";
import { seedFxRates } from "./fx-rates";
import type { Queries, Sql } from "./index";

export const SANDBOX_PROVIDER_CODE = "sandbox";

/** Creates the provider or refreshes its connection settings (which come from configuration; the callback secret sealed). */
export async function upsertProvider(
  db: Queries,
  p: { code: string; name: string; connector: string; baseUrl: string; callbackSecret: string; timeoutMs: number },
): Promise<string> {
  const { id } = await db
    .insertInto("providers")
    .values({ id: randomUUID(), ...p })
    .onConflict((oc) =>
      oc.column("code").doUpdateSet((eb) => ({
        baseUrl: eb.ref("excluded.baseUrl"),
        callbackSecret: eb.ref("excluded.callbackSecret"),
        timeoutMs: eb.ref("excluded.timeoutMs"),
        connector: eb.ref("excluded.connector"),
      })),
    )
    .returning("id")
    .executeTakeFirstOrThrow();
  return id;
}

/**
 * Gives the provider the default routes when it has none (operators' edits survive restarts).
 * The provider row is locked, so replicas starting together seed once. Resolves to routes added.
 */
export function seedRoutesIfNone(sql: Sql, providerId: string, routes: DefaultRoute[]): Promise<number> {
  return sql.$transaction(async (tx) => {
    await tx.selectFrom("providers").select("id").where("id", "=", providerId).forUpdate().execute();
    if (await tx.selectFrom("routes").select("id").where("providerId", "=", providerId).limit(1).executeTakeFirst()) return 0;
    await tx
      .insertInto("routes")
      .values(routes.map((r) => ({ ...r, id: randomUUID(), providerId })))
      .execute();
    return routes.length;
  });
}

/**
 * Idempotent; replicas may run it at once. `sandbox.callbackSecret` as stored: sealed. Resolves to
 * the number of routes it added (0 when the provider had some).
 */
export async function seedDefaults(sql: Sql, sandbox: { baseUrl: string; callbackSecret: string; timeoutMs: number }): Promise<number> {
  const providerId = await upsertProvider(sql, { code: SANDBOX_PROVIDER_CODE, name: "Provider sandbox", connector: "sandbox", ...sandbox });
  const added = await seedRoutesIfNone(sql, providerId, defaultRoutes());
  await seedFxRates(sql, DEFAULT_FX_SOURCE, DEFAULT_FX_RATES);
  return added;
}
