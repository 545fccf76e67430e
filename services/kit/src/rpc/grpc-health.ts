import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@pgw/proto/gen/grpc/health/v1/health_pb";
import { failingChecks, type ProbeState } from "../http/health-http";

/**
 * grpc.health.v1.Health: SERVING while every readiness check passes. The empty service name means
 * the whole server; the names of the registered services are known too.
 */
export function registerGrpcHealth(router: ConnectRouter, state: ProbeState, serviceNames: string[]): void {
  const known = new Set(["", ...serviceNames]);
  const status = async (service: string) => {
    if (!known.has(service)) throw new ConnectError(`unknown service ${service}`, Code.NotFound);
    return (await failingChecks(state)).length === 0 ? Status.SERVING : Status.NOT_SERVING;
  };
  router.service(Health, {
    async check(req) {
      return { status: await status(req.service) };
    },
    async *watch(req, ctx) {
      let last: Status | undefined;
      while (!ctx.signal.aborted) {
        const now = await status(req.service);
        if (now !== last) yield { status: now };
        last = now;
        await new Promise((r) => setTimeout(r, 1000));
      }
    },
  });
}
