/** The ledger's own environment variables; the kit's service variables are read by runService. */
import { env, loadConfig } from "@pgw/kit/runtime";

export function loadLedgerConfig(source: NodeJS.ProcessEnv) {
  return loadConfig(
    {
      /** operations: the status events to replay (reconciliation) and the orphan sweep's lookups. */
      OPERATIONS_URL: env.url("http://127.0.0.1:50051"),
      /** A reserve held this long for an operation operations does not know is released (jobs/orphan-reserves.ts). */
      ORPHAN_RESERVE_AGE_MS: env.int(600_000, 1000),
      /** How often the orphan-reserve sweep runs. */
      ORPHAN_RESERVE_SWEEP_MS: env.int(300_000, 100),
    },
    source,
  );
}

export type LedgerConfig = ReturnType<typeof loadLedgerConfig>;
