/**
 * Starts OpenTelemetry's Node SDK before a unit's code loads, when OTEL_EXPORTER_OTLP_ENDPOINT is
 * set: `node --require <unit>/dist/tracing.js <unit>/dist/main.js` in the image, `--import` of this
 * file under tsx in local mode. Instrumentations patch modules as they load (http, pg; undici
 * listens on its diagnostics channels), so they must be in place first. Without the variable
 * nothing of the SDK is loaded and the kit's spans (tracing.ts) stay no-ops.
 *
 * The service name is OTEL_SERVICE_NAME, or else the unit's folder: the entry's grandparent
 * (`services/operations/dist/main.js` → operations). Spans leave in batches by OTLP
 * (OTEL_EXPORTER_OTLP_PROTOCOL, default http/protobuf); the SDK reads its other OTEL_* variables
 * itself (sampler, resource attributes, headers, OTEL_BSP_SCHEDULE_DELAY: a unit that exits loses
 * the spans of its last batch interval).
 */
import path from "node:path";

function unitOfEntry(entry: string | undefined): string | undefined {
  return entry ? path.basename(path.dirname(path.dirname(entry))) : undefined;
}

function startSdk(): void {
  // Loaded only here: a unit without tracing never evaluates the SDK.
  const { NodeSDK } = require("@opentelemetry/sdk-node") as typeof import("@opentelemetry/sdk-node");
  const { HttpInstrumentation } = require("@opentelemetry/instrumentation-http") as typeof import("@opentelemetry/instrumentation-http");
  const { PgInstrumentation } = require("@opentelemetry/instrumentation-pg") as typeof import("@opentelemetry/instrumentation-pg");
  const { UndiciInstrumentation } = require("@opentelemetry/instrumentation-undici") as typeof import("@opentelemetry/instrumentation-undici");
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME || unitOfEntry(process.argv[1]),
    instrumentations: [
      // Probes and metrics scrapes would be most of the traces and say nothing.
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => /^\/(livez|healthz|readyz|metrics)\b/.test(req.url ?? "") }),
      new PgInstrumentation({ requireParentSpan: true }),
      new UndiciInstrumentation(),
    ],
  });
  sdk.start();
}

if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) startSdk();
