/** Local infrastructure for `start` and the test suite: embedded Postgres, nats-server, the unit table. */
export { freePort, freePortsForLater, isPortFree, RESERVED_PORTS } from "./free-port";
export {
  startEmbeddedPostgres,
  releaseEmbeddedPostgresSignalHandlers,
  type EmbeddedPostgres,
  type EmbeddedPostgresOptions,
} from "./embedded-postgres";
export { startNatsServer, ensureNatsServer, findNatsServer, NatsServerMissingError, type NatsServer, type NatsServerOptions } from "./nats-server";
export { startEmbeddedInfra, type EmbeddedInfra, type EmbeddedInfraOptions, type EmbeddedServer } from "./embedded-infra";
export {
  UNITS,
  DEFAULT_ADMIN_TOKEN,
  adminToken,
  databaseUrlFor,
  localUrls,
  portOverrideVariable,
  readinessUrl,
  resolveUnitPorts,
  spawnUnit,
  tsxLoader,
  tracingEntry,
  unitCommand,
  unitEnvironment,
  type LocalUrls,
  type UnitName,
  type UnitPorts,
  type UnitSpec,
} from "./units";
