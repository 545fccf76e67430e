import type { KitLog } from "@pgw/kit/events";
import type { Stoppable } from "@pgw/kit/runtime";
import type { Store } from "../store";

/**
 * Listens for scenario changes made through any replica (NOTIFY on `sandbox_scenarios`), so the
 * store's cached scenarios are dropped when one changes, and reconnects when the connection is lost.
 * Until it listens, the store caches nothing.
 */
export function startScenarioChanges(store: Store, databaseUrl: string, log: KitLog): Stoppable {
  return store.listenForScenarioChanges(databaseUrl, log);
}
