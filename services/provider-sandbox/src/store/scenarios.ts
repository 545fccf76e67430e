import { NotifiedCache, type PgListener } from "@pgw/kit/db";
import { type KitLog } from "@pgw/kit/events";
import { sql, type Selectable } from "kysely";
import type { Method } from "../domain/methods";
import { defaultScenario, type AcceptMode, type EvidenceMode, type Scenario } from "../domain/scenario";
import type { SandboxScenario } from "../generated/kysely/database";
import type { Queries } from "./index";

/** The NOTIFY channel on which a scenario change tells every sandbox replica to drop its cached scenarios. */
export const SCENARIO_CHANNEL = "sandbox_scenarios";

const SCENARIO_COLUMNS = ["method", "accept", "acceptDelayMs", "requiresReceipt", "evidence", "expiresInS"] as const;

/** A scenario row as read, its text columns read as what they hold. */
const toScenario = ({ method, accept, acceptDelayMs, requiresReceipt, evidence, expiresInS }: Pick<Selectable<SandboxScenario>, (typeof SCENARIO_COLUMNS)[number]>): Scenario => ({
  method: method as Method,
  accept: accept as AcceptMode,
  acceptDelayMs,
  requiresReceipt,
  evidence: evidence as EvidenceMode,
  expiresInS,
});

/** `pg_notify` of the scenario channel, the channel a literal as in every statement text before. */
const notifyScenarioChange = sql<void>`pg_notify(${sql.lit(SCENARIO_CHANNEL)}, '')`;

/**
 * The scenarios, cached in the process (every create and every pay reads one, and they change only
 * through the control API): a change replaces the cached one here and is announced on
 * {@link SCENARIO_CHANNEL} to the others, in the statement that stores it.
 */
export function scenarioStore(db: Queries) {
  const scenarios = new NotifiedCache<Method, Scenario>();

  return {
    /** The scenario in force for `method` (the default when none is stored). */
    scenario(method: Method): Promise<Scenario> {
      return scenarios.get(method, async () => {
        const row = await db.selectFrom("sandboxScenarios").select(SCENARIO_COLUMNS).where("method", "=", method).executeTakeFirst();
        return row ? toScenario(row) : defaultScenario(method);
      });
    },

    /** Starts caching scenarios, listening for other replicas' changes; stop it at shutdown. */
    listenForScenarioChanges(databaseUrl: string, log: KitLog): PgListener {
      return scenarios.listen(databaseUrl, SCENARIO_CHANNEL, log);
    },

    /** Stores (replaces) the scenario of its method. */
    async putScenario(s: Scenario): Promise<Scenario> {
      const row = await db
        .with("stored", (qc) =>
          qc
            .insertInto("sandboxScenarios")
            .values({
              method: s.method,
              accept: s.accept,
              acceptDelayMs: s.acceptDelayMs,
              requiresReceipt: s.requiresReceipt,
              evidence: s.evidence,
              expiresInS: s.expiresInS,
              updatedAt: new Date(),
            })
            .onConflict((oc) =>
              oc.column("method").doUpdateSet((eb) => ({
                accept: eb.ref("excluded.accept"),
                acceptDelayMs: eb.ref("excluded.acceptDelayMs"),
                requiresReceipt: eb.ref("excluded.requiresReceipt"),
                evidence: eb.ref("excluded.evidence"),
                expiresInS: eb.ref("excluded.expiresInS"),
                updatedAt: eb.ref("excluded.updatedAt"),
              })),
            )
            .returning(SCENARIO_COLUMNS),
        )
        .selectFrom("stored")
        .select(SCENARIO_COLUMNS)
        .select(notifyScenarioChange.as("notified"))
        .executeTakeFirstOrThrow();
      const scenario = toScenario(row);
      scenarios.set(scenario.method, scenario);
      return scenario;
    },

    /** Forgets every stored scenario: every method is back to the default. */
    async resetScenarios(): Promise<void> {
      await db
        .with("gone", (qc) => qc.deleteFrom("sandboxScenarios"))
        .selectNoFrom(notifyScenarioChange.as("notified"))
        .execute();
      scenarios.forget();
    },
  };
}
