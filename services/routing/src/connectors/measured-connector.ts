/**
 * Provider calls measured: every call a connector makes is counted by provider, call and outcome
 * and timed, whichever connector serves the provider. The provider label is the provider's code, a
 * short list the operators configure; the outcome is `ok` or the ProviderFailure.
 */
import { Counter, Histogram, type Registry } from "prom-client";
import { failureOf, type ProviderConnector } from "./connector";
import type { ConnectorRegistry } from "./registry";

/** The connector methods that call the provider (parseCallback only reads a body we were sent). */
const CALLS = ["createPayin", "createPayout", "cancel", "placedFor", "checkFunds", "status", "getEvidence", "getEvidenceFile"] as const;

export interface ProviderMetrics {
  calls: Counter<"provider" | "call" | "outcome">;
  seconds: Histogram<"provider" | "call">;
}

export function providerMetrics(registry: Registry): ProviderMetrics {
  return {
    calls: new Counter({ name: "routing_provider_requests_total", help: "Calls to providers, by provider, call and outcome", labelNames: ["provider", "call", "outcome"], registers: [registry] }),
    seconds: new Histogram({
      name: "routing_provider_request_duration_seconds",
      help: "Time a provider took to answer a call, by provider and call",
      labelNames: ["provider", "call"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [registry],
    }),
  };
}

function measured(connector: ProviderConnector, metrics: ProviderMetrics): ProviderConnector {
  // The connector as prototype: what is not measured (parseCallback) is its own, whatever kind of object it is.
  const wrapped: ProviderConnector = Object.create(connector);
  for (const call of CALLS) {
    const original = connector[call] as (p: { code: string }, ...rest: unknown[]) => Promise<unknown>;
    (wrapped as unknown as Record<string, unknown>)[call] = async (p: { code: string }, ...rest: unknown[]) => {
      const end = metrics.seconds.startTimer({ provider: p.code, call });
      let outcome = "ok";
      try {
        return await original.call(connector, p, ...rest);
      } catch (err) {
        outcome = failureOf(err);
        throw err;
      } finally {
        end();
        metrics.calls.inc({ provider: p.code, call, outcome });
      }
    };
  }
  return wrapped;
}

/** `connectorFor` whose connectors measure every provider call in `metrics`. */
export function measuredConnectors(connectorFor: ConnectorRegistry, metrics: ProviderMetrics): ConnectorRegistry {
  const cache = new Map<ProviderConnector, ProviderConnector>();
  return (name) => {
    const connector = connectorFor(name);
    let wrapped = cache.get(connector);
    if (!wrapped) cache.set(connector, (wrapped = measured(connector, metrics)));
    return wrapped;
  };
}
