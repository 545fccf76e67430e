import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { Histogram, type Registry } from "prom-client";

/** Latency buckets of RPC calls, seconds: a read takes a millisecond, a create up to its 15 s budget. */
export const RPC_SECONDS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15];

const CLIENT_HISTOGRAM = "grpc_client_handling_seconds";

/** The `method` label of a call, and its span's name: `package.Service/Method`, a fixed set per unit. */
export const rpcMethodLabel = (req: { service: { typeName: string }; method: { name: string } }) => `${req.service.typeName}/${req.method.name}`;

/** The `code` label of a failed call: the numeric gRPC code (as the server's; a success is `ok`). */
const rpcCodeLabel = (err: unknown) => String(ConnectError.from(err).code);

/**
 * A client interceptor timing every call a unit makes to another in `grpc_client_handling_seconds{method, code}`,
 * from the caller's side (the time includes the network and the peer's queue, which the server's own
 * `grpc_server_handling_seconds` does not see; a streaming call is timed to its first answer). Every
 * transport of a unit shares the registry's one histogram.
 */
export function rpcClientMetrics(registry: Registry): Interceptor {
  const duration =
    (registry.getSingleMetric(CLIENT_HISTOGRAM) as Histogram<"method" | "code"> | undefined) ??
    new Histogram({
      name: CLIENT_HISTOGRAM,
      help: "RPC call time seen by the calling unit, by method and code",
      labelNames: ["method", "code"],
      buckets: RPC_SECONDS_BUCKETS,
      registers: [registry],
    });
  return (next) => async (req) => {
    const method = rpcMethodLabel(req);
    const end = duration.startTimer({ method });
    try {
      const res = await next(req);
      end({ code: "ok" });
      return res;
    } catch (err) {
      end({ code: rpcCodeLabel(err) });
      throw err;
    }
  };
}
