/** HTTP plumbing shared by connectors: fetch with an AbortSignal, failures as ProviderError. */
import { ProviderError } from "./connector";

export interface HttpAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

function failureOf(err: unknown, signal: AbortSignal): ProviderError {
  if (signal.aborted) {
    const reason = signal.reason as { name?: string } | undefined;
    const timedOut = reason?.name === "TimeoutError";
    return new ProviderError("timeout", timedOut ? "provider did not answer in time" : "provider call aborted", undefined, { cause: err });
  }
  return new ProviderError("failed", "provider unreachable", undefined, { cause: err });
}

/** Sends one request; resolves to any answer the provider gave, rejects only on no answer. */
export async function send(url: string, init: { method: string; json?: unknown; signal: AbortSignal }): Promise<HttpAnswer> {
  try {
    const res = await fetch(url, {
      method: init.method,
      headers: init.json === undefined ? { accept: "application/json" } : { "content-type": "application/json", accept: "application/json" },
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
      signal: init.signal,
    });
    const body = Buffer.from(await res.arrayBuffer());
    return { status: res.status, contentType: res.headers.get("content-type") ?? "", body };
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

/** An AbortSignal that fires after `ms` or when `parent` aborts, whichever is first. */
export function timeoutSignal(ms: number, parent?: AbortSignal): AbortSignal {
  const timeout = AbortSignal.timeout(ms);
  return parent ? AbortSignal.any([timeout, parent]) : timeout;
}
