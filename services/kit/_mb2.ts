import http2 from "node:http2";
import { createClient } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { HealthCheckResponse_ServingStatus, Health } from "@pgw/proto/gen/grpc/health/v1/health_pb";
(async () => {
  const handler = connectNodeAdapter({ routes: (r) => r.service(Health, { check: async () => ({ status: HealthCheckResponse_ServingStatus.SERVING }), watch: async function* () {}, list: async () => ({}) } as any) });
  const server = http2.createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as any).port;
  const client = createClient(Health, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}`, defaultTimeoutMs: 5000 }));
  const N = 5000;
  const run = () => Promise.all(Array.from({ length: 8 }, async () => { for (let i = 0; i < N / 8; i++) await client.check({}); }));
  await run();
  const c0 = process.cpuUsage(); const t0 = performance.now();
  await run();
  const c = process.cpuUsage(c0); console.log("srcmaps", process.sourceMapsEnabled, ((c.user + c.system) / 1000 / N).toFixed(3), "ms cpu/call (client+server)", ((performance.now() - t0) / N).toFixed(3), "ms wall/call");
  process.exit(0);
})();
