import { request, type RawResponse } from "./http";
import { pollUntil } from "./poll";
import type { Stack } from "./stack";

/** A merchant's view of the stack (or of one gateway replica's public URL): public API calls with one API key. */
export function merchantClient(stack: Pick<Stack, "publicUrl">, apiKey: string) {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> =>
    request(stack.publicUrl + path, { method: "POST", headers: { "content-type": "application/json", "X-API-Key": apiKey, ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
  const state = (ref: { operation_id?: string; merchant_operation_id?: string }) => post("/v1/get_operation_state", ref);
  return {
    post,
    get: (path: string) => request(stack.publicUrl + path, { headers: { "X-API-Key": apiKey } }),
    payment: (body: Record<string, unknown>) => post("/v1/payment", body),
    paymentLink: (body: Record<string, unknown>) => post("/v1/payment/link", body),
    payout: (body: Record<string, unknown>) => post("/v1/payout", body),
    state,
    cancel: (body: Record<string, unknown>) => post("/v1/cancel_operation", body),
    /** Polls GET /v1/balances until `currency`'s balance is `balance` (the ledger posts asynchronously) and answers that row. */
    waitForBalance: (currency: string, balance: string, timeoutMs = 10_000): Promise<Record<string, string> | undefined> =>
      pollUntil(
        async () => (await request(stack.publicUrl + "/v1/balances", { headers: { "X-API-Key": apiKey } })).body?.balances?.find((b: { currency: string }) => b.currency === currency),
        (row) => row?.balance === balance,
        timeoutMs,
      ),
    /** Polls get_operation_state until the status is `status` (or the time is up) and answers the last read. */
    waitForStatus: (operationId: string, status: string, timeoutMs = 10_000): Promise<RawResponse> =>
      pollUntil(() => state({ operation_id: operationId }), (res) => res.body?.status === status, timeoutMs),
  };
}

/** The provider sandbox's control API (docs/architecture.md, Provider sandbox control API). */
export function sandboxControl(stack: Stack) {
  const call = (method: string, path: string, body?: unknown) =>
    request(stack.sandboxUrl + path, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return {
    scenario: (scenario: Record<string, unknown>) => call("PUT", "/control/scenario", scenario),
    reset: () => call("DELETE", "/control/scenario"),
    pay: (operationId: string, body: { amount: string; legs?: string[] }) => call("POST", `/control/operations/${operationId}/pay`, body),
    settle: (operationId: string, body: { legs?: string[] } = {}) => call("POST", `/control/operations/${operationId}/settle`, body),
    decline: (operationId: string) => call("POST", `/control/operations/${operationId}/decline`),
    expire: (operationId: string) => call("POST", `/control/operations/${operationId}/expire`),
  };
}

let counter = 0;
/** A unique merchant_operation_id. */
export const newMoid = (prefix = "op") => `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
