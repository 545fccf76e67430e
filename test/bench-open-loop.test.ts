/**
 * The benchmark's open-loop generator: it keeps its arrival rate while the server stalls, and the
 * requests that arrived during the stall show their wait in the percentiles.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { openLoop, parseResponse } from "../scripts/bench/open-loop";

test("arrivals keep their rate through a 300 ms stall, and the stall shows in p99 but not in p50", async () => {
  let stallFrom = Infinity;
  const server = http.createServer((req, res) => {
    req.resume();
    const now = performance.now();
    // Requests arriving inside the stall are all answered when it ends.
    const wait = now >= stallFrom && now < stallFrom + 300 ? stallFrom + 300 - now : 0;
    setTimeout(() => res.end("{}"), wait);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  try {
    const started = performance.now();
    stallFrom = started + 800;
    const result = await openLoop("stall", { url, method: "POST", body: () => "{}", rate: 200, durationS: 2 });
    expect(result.errors + result.non2xx).toBe(0);
    expect(result.rps).toBeGreaterThanOrEqual(170);
    expect(result.rps).toBeLessThanOrEqual(210);
    expect(result.p50).toBeLessThan(50);
    // 300 ms at 200/s is 60 of 400 requests (15 %) waiting up to 300 ms.
    expect(result.p99).toBeGreaterThanOrEqual(200);
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test("a response counts once it is whole: by content-length, by the last chunk, or at the headers' end without a body", () => {
  const sized = Buffer.from("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
  expect(parseResponse(sized.subarray(0, sized.length - 1))).toBeNull();
  expect(parseResponse(sized)).toEqual({ status: 200, length: sized.length, close: false });
  const chunked = Buffer.from("HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\nHTTP/1.1");
  expect(parseResponse(chunked.subarray(0, 90))).toBeNull();
  expect(parseResponse(chunked)).toEqual({ status: 503, length: chunked.length - "HTTP/1.1".length, close: true });
  expect(parseResponse(Buffer.from("HTTP/1.1 204 No Content\r\n\r\n"))).toEqual({ status: 204, length: 27, close: false });
});
