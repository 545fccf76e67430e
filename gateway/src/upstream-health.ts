import type { Client } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus } from "@pgw/proto/gen/grpc/health/v1/health_pb";

/** Readiness check of a peer service through grpc.health.v1 (never throws). */
export function upstreamServing(health: Client<typeof Health>): () => Promise<boolean> {
  return async () => {
    try {
      const res = await health.check({ service: "" }, { timeoutMs: 1000 });
      return res.status === HealthCheckResponse_ServingStatus.SERVING;
    } catch {
      return false;
    }
  };
}
