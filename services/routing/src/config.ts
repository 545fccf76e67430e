import { env, isLocalMode, loadConfig } from "@pgw/kit/runtime";

/** Environment of the routing unit beyond what every service reads (see the kit's serviceConfigShape). */
export function loadRoutingConfig(source: NodeJS.ProcessEnv) {
  const config = loadConfig(
    {
      /**
       * Seed provider `sandbox` (at SANDBOX_URL), its default routes and FX rates at start. Default:
       * only in local mode. A deployment that routes real money must leave it off: the sandbox's
       * control API marks any operation paid.
       */
      SEED_SANDBOX: env.bool(isLocalMode(source)),
      /** Base URL of the provider sandbox, seeded as provider `sandbox`. */
      SANDBOX_URL: env.url("http://127.0.0.1:8090"),
      /** Secret the sandbox signs its callbacks with (dev default only in LOCAL_MODE). */
      SANDBOX_CALLBACK_SECRET: env.secret(source, "sandbox-callback-secret"),
      /**
       * Where providers call back (…/callbacks/<provider code>). Required outside local mode (a
       * provider cannot call 127.0.0.1); in local mode it defaults to this unit's health port there.
       */
      CALLBACK_BASE_URL: isLocalMode(source) ? env.url().optional() : env.url(),
      /** Per-call timeout of provider HTTP calls (seeded as the sandbox's timeout_ms). */
      PROVIDER_TIMEOUT_MS: env.int(5000, 1),
      /**
       * Deadline of asking a provider's evidence legs when its callback reports a completion, so the
       * provider update carries them (0: not asked; receipts and the notifier then ask for them).
       */
      COMPLETION_EVIDENCE_TIMEOUT_MS: env.int(1000, 0),
      /** Allocation budget when the caller sends none (budget_ms = 0). */
      ALLOCATION_BUDGET_MS: env.int(15000, 1),
      /** How often active allocations whose callback is overdue are asked about at their provider. */
      PROVIDER_RECONCILE_MS: env.int(60_000, 100),
      /** An active allocation unchanged this long has its provider asked where it stands. */
      PROVIDER_RECONCILE_AGE_MS: env.int(600_000, 1000),
      /** How often provider creates with an unknown outcome are looked for at their provider (jobs/unsettled-placements.ts). */
      UNSETTLED_CHECK_MS: env.int(1000, 100),
      /** How long candidate routes are cached (route changes take effect within it; 0 disables). */
      ROUTES_CACHE_MS: env.int(2000),
    },
    source,
  );
  return { ...config, CALLBACK_BASE_URL: config.CALLBACK_BASE_URL?.replace(/\/+$/, "") };
}

export type RoutingConfig = ReturnType<typeof loadRoutingConfig>;
