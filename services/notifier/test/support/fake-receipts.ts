/** A stand-in receipts service answering GetEvidence from a map (others: unavailable error). */
import { AppError, type Evidence } from "@pgw/contracts";
import { startRpcServer } from "@pgw/kit/rpc";
import { createLogger } from "@pgw/kit/runtime";
import { ReceiptsService } from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";
import { Registry } from "prom-client";

export async function startFakeReceipts(evidence: Map<string, Evidence>) {
  const server = await startRpcServer(
    0,
    "127.0.0.1",
    (router) =>
      router.service(ReceiptsService, {
        async getEvidence(req) {
          const e = evidence.get(req.operationId);
          if (!e) throw new AppError("unavailable", "provider evidence unavailable");
          return { status: e.status, items: e.items };
        },
      }),
    createLogger("fake-receipts", "silent"),
    new Registry(),
  );
  return { url: `http://127.0.0.1:${server.port}`, close: () => server.close(100) };
}
