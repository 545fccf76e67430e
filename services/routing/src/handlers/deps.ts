/** Collaborators every routing handler receives (no module-level singletons). */
import type { DataKeys } from "@pgw/kit/db";
import type { Logger } from "@pgw/kit/runtime";
import type { ConfigCache } from "../store/config-cache";
import type { ProviderConnector, ProviderEndpoint } from "../connectors/connector";
import type { ConnectorRegistry } from "../connectors/registry";
import type { Db, ProviderRow, Sql } from "../store";

export interface RoutingDeps extends ConfigCache {
  /** ORM client: the admin listing of routes. */
  db: Db;
  /** The unit's database (Kysely on the pg pool): every other statement, through the store. */
  sql: Sql;
  log: Logger;
  /** Open and seal what the store keeps sealed (provider secrets, requisites, callback bodies). */
  keys: DataKeys;
  connectorFor: ConnectorRegistry;
  /** Base of the URL providers call back (…/callbacks/<provider code>). */
  callbackBaseUrl(): string;
  /** Allocation budget when the caller sends none. */
  defaultBudgetMs: number;
  /** How long a provider's completion waits for its evidence legs (0: they are not asked for). */
  completionEvidenceMs: number;
}

/** A provider row as its connector needs it (its secret opened), plus the connector itself. */
export function providerOf(deps: RoutingDeps, row: ProviderRow): { endpoint: ProviderEndpoint; connector: ProviderConnector; timeoutMs: number } {
  return {
    endpoint: { code: row.code, baseUrl: row.baseUrl, callbackSecret: deps.keys.read(row.callbackSecret) },
    connector: deps.connectorFor(row.connector),
    timeoutMs: row.timeoutMs,
  };
}

/** The callback URL given to a provider when an operation is placed there. */
export function callbackUrlFor(deps: RoutingDeps, providerCode: string): string {
  return `${deps.callbackBaseUrl()}/callbacks/${encodeURIComponent(providerCode)}`;
}
