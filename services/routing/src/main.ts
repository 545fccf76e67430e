/** The routing unit's wiring: configuration, store, connectors, routes and jobs → runService. */
import { AppError } from "@pgw/contracts";
import { loadDataKeys } from "@pgw/kit/db";
import { loadGrpcTls } from "@pgw/kit/rpc";
import { env, loadConfig, runMain, runService, unitMetricsRegistry, type ServiceDeps } from "@pgw/kit/runtime";
import path from "node:path";
import { loadRoutingConfig } from "./config";
import { configCache } from "./store/config-cache";
import { measuredConnectors, providerMetrics } from "./connectors/measured-connector";
import { connectorFor } from "./connectors/registry";
import { startStatusConsumer } from "./events";
import { callbackHandler } from "./handlers/callbacks";
import type { RoutingDeps } from "./handlers/deps";
import { releaseAllocation } from "./handlers/release";
import { startProviderReconciliation } from "./jobs/provider-reconciliation";
import { startUnsettledPlacementChecks } from "./jobs/unsettled-placements";
import { ACCESS, routes } from "./routes";
import { createDb, SANDBOX_PROVIDER_CODE, SEALED_COLUMNS, seedDefaults, type DB, type Db } from "./store";

const HEALTH_PORT = 9092;

/** Starts the routing unit with the given environment. */
export async function startRouting(source: NodeJS.ProcessEnv = process.env) {
  const config = loadRoutingConfig(source);
  const keys = loadDataKeys(source);
  // Without CALLBACK_BASE_URL, providers call back on this unit's health port, known once bound.
  const configuredPort = loadConfig({ HEALTH_PORT: env.port(HEALTH_PORT) }, source).HEALTH_PORT;
  let boundPort: number | undefined = configuredPort || undefined;
  const callbackBaseUrl = () => {
    if (config.CALLBACK_BASE_URL) return config.CALLBACK_BASE_URL;
    if (boundPort === undefined) throw new AppError("unavailable", "starting up");
    return `http://127.0.0.1:${boundPort}`;
  };
  const registry = unitMetricsRegistry();
  const measuredConnectorFor = measuredConnectors(connectorFor, providerMetrics(registry));
  // runService hands the same ServiceDeps to routes, http and background: one RoutingDeps (and one cache) for all.
  let deps: RoutingDeps | undefined;
  const depsOf = (d: ServiceDeps<Db, DB>): RoutingDeps =>
    (deps ??= {
      db: d.db,
      sql: d.sql,
      log: d.log,
      keys,
      connectorFor: measuredConnectorFor,
      callbackBaseUrl,
      defaultBudgetMs: config.ALLOCATION_BUDGET_MS,
      completionEvidenceMs: config.COMPLETION_EVIDENCE_TIMEOUT_MS,
      ...configCache(d.sql, config.ROUTES_CACHE_MS),
    });

  const unit = await runService<Db, DB>(
    {
      name: "routing",
      grpcTls: loadGrpcTls(source),
      grpcPort: 50052,
      healthPort: HEALTH_PORT,
      migrationsDir: path.join(__dirname, "..", "prisma", "migrations"),
      createDb,
      access: ACCESS,
      registry,
      sealed: { keys, columns: SEALED_COLUMNS },
      routes: (d) => routes(depsOf(d)),
      http: (d) => callbackHandler(depsOf(d)),
      background: async (d) => {
        if (config.SEED_SANDBOX) {
          const added = await seedDefaults(d.sql, { baseUrl: config.SANDBOX_URL, callbackSecret: keys.seal(config.SANDBOX_CALLBACK_SECRET), timeoutMs: config.PROVIDER_TIMEOUT_MS });
          if (added > 0) d.log.info({ provider: SANDBOX_PROVIDER_CODE, routes: added }, "default routes seeded");
        }
        const deps = depsOf(d);
        const consumer = await startStatusConsumer({
          nc: d.nc,
          db: d.sql,
          log: d.log,
          release: (operationId, reason) => releaseAllocation(deps, operationId, reason),
        });
        const reconciliation = startProviderReconciliation(deps, { everyMs: config.PROVIDER_RECONCILE_MS, ageMs: config.PROVIDER_RECONCILE_AGE_MS });
        const unsettled = startUnsettledPlacementChecks(deps, config.UNSETTLED_CHECK_MS);
        return [consumer, reconciliation, unsettled];
      },
    },
    source,
  );
  boundPort = unit.healthPort;
  return unit;
}

if (require.main === module) runMain(() => startRouting());
