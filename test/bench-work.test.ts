/** The benchmark's work accounting: counter deltas shared out per request, by kind and part. */
import { workPerRequest } from "../scripts/bench/work";

test("work per request is counted per kind, its parts largest first, and kinds without work show a dash", () => {
  const before = new Map([["transactions\toperations", 100], ["transactions\tledger", 50], ["RPCs\tOperationsService/CreateOperation", 10]]);
  const after = new Map([
    ["transactions\toperations", 2100],
    ["transactions\tledger", 1050],
    ["transactions\treceipts", 4], // background work, below 0.005 a request
    ["RPCs\tOperationsService/CreateOperation", 1010],
    ["RPCs\tRoutingService/Allocate", 1000],
  ]);
  const work = workPerRequest(before, after, 1000);
  expect(work.get("transactions")).toBe("3.00 (operations 2.00, ledger 1.00)");
  expect(work.get("RPCs")).toBe("2.00 (OperationsService/CreateOperation 1.00, RoutingService/Allocate 1.00)");
  expect(work.get("deliveries")).toBe("–");
});
