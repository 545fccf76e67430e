/** Connector implementations by the name a provider row carries in `providers.connector`. */
import { AppError } from "@pgw/contracts";
import type { ProviderConnector } from "./connector";
import { sandboxConnector } from "./sandbox/sandbox-connector";

export type ConnectorRegistry = (name: string) => ProviderConnector;

const CONNECTORS: Record<string, ProviderConnector> = { sandbox: sandboxConnector };

/** The connector of a provider; a provider configured with an unknown connector is a deployment error. */
export const connectorFor: ConnectorRegistry = (name) => {
  const connector = CONNECTORS[name];
  if (!connector) throw new AppError("internal", "provider misconfigured", [], { cause: new Error(`unknown connector ${name}`) });
  return connector;
};
