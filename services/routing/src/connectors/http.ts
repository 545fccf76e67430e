/**
 * HTTP plumbing shared by connectors: undici's request (pooled keep-alive connections; a third of
 * the CPU of the WHATWG fetch on every provider call) with an AbortSignal, failures as ProviderError.
 */
import { request } from "undici";
import { ProviderError } from "./connector";

export interface HttpAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

/** Errors of a connection that was never made: nothing was sent. */
const NOT_CONNECTED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);

function failureOf(err: unknown, signal: AbortSignal): ProviderError {
  if (signal.aborted) {
    const reason = signal.reason as { name?: string } | undefined;
    const timedOut = reason?.name === "TimeoutError";
    return new ProviderError("timeout", timedOut ? "provider did not answer in time" : "provider call aborted", undefined, { cause: err });
  }
  const code = (err as { code?: string } | undefined)?.code;
  if (code !== undefined && NOT_CONNECTED.has(code)) return new ProviderError("unreachable", "provider unreachable", undefined, { cause: err });
  return new ProviderError("failed", "provider call failed", undefined, { cause: err });
}

/** Sends one request; resolves to any answer the provider gave, rejects only on no answer. */
export async function send(url: string, init: { method: string; json?: unknown; signal: AbortSignal }): Promise<HttpAnswer> {
  try {
    const res = await request(url, {
      method: init.method as "GET" | "POST",
      headers: init.json === undefined ? { accept: "application/json" } : { "content-type": "application/json", accept: "application/json" },
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
      signal: init.signal,
    });
    const body = Buffer.from(await res.body.arrayBuffer());
    const contentType = res.headers["content-type"];
    return { status: res.statusCode, contentType: (Array.isArray(contentType) ? contentType[0] : contentType) ?? "", body };
  } catch (err) {
    throw failureOf(err, init.signal);
  }
}

/** Turns a non-2xx answer into a ProviderError (404 not_found, 4xx refused, 5xx unavailable). */
export function ensureOk(answer: HttpAnswer, what: string): HttpAnswer {
  if (answer.status >= 200 && answer.status < 300) return answer;
  const failure = answer.status === 404 ? "not_found" : answer.status < 500 ? "refused" : "unavailable";
  throw new ProviderError(failure, `${what}: provider answered ${answer.status}`, answer.status);
}

/** Parses a JSON body; an unreadable one is a `failed` call. */
export function jsonOf(answer: HttpAnswer, what: string): unknown {
  try {
    return JSON.parse(answer.body.toString("utf8"));
  } catch (err) {
    throw new ProviderError("failed", `${what}: provider answered malformed JSON`, answer.status, { cause: err });
  }
}

/**
 * Runs `call` with an AbortSignal that fires after `ms` (reason: a TimeoutError) or when `parent`
 * aborts, whichever is first; once `call` settles, the timer and the listener on `parent` are gone
 * (a timer left to fire after every answered call cost a DOMException each, and kept the call's
 * objects alive for `ms`). Built from a controller and a timer, not AbortSignal.any([
 * AbortSignal.timeout(ms), parent]): on Node 20 a garbage collection can collect that
 * combination's timeout before it fires (nodejs/node#57736), and a provider that never answered
 * then held the allocation until the caller's deadline (17 s instead of PROVIDER_TIMEOUT_MS, under
 * load). The timer is unref'd, so it never keeps a stopping process alive.
 */
export async function withTimeout<T>(ms: number, parent: AbortSignal | undefined, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onParentAbort = () => controller.abort(parent?.reason);
  const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${ms} ms`, "TimeoutError")), ms);
  timer.unref();
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener("abort", onParentAbort, { once: true });
  try {
    return await call(controller.signal);
  } finally {
    clearTimeout(timer);
    parent?.removeEventListener("abort", onParentAbort);
  }
}
