import type { Logger, Stoppable } from "@pgw/kit/runtime";
import { request } from "undici";
import { retryDelays, signCallback, SIGNATURE_HEADER, type CallbackPayload } from "../domain/callback";

/** Result of the first delivery attempt of a callback. */
export interface Delivery {
  delivered: boolean;
  /** HTTP status of the answer; absent on a network error or timeout. */
  status_code?: number;
}

/**
 * Sends signed callbacks to callback URLs, retrying failures in the background; `stop` cancels every
 * pending retry and waits for attempts in flight.
 */
export interface CallbackSender extends Stoppable {
  /** POSTs `payload` to `url` once and answers how it went; failures are retried later. */
  send(url: string, payload: CallbackPayload): Promise<Delivery>;
}

/** Settings of {@link startCallbackDelivery}. */
export interface CallbackSettings {
  secret: string;
  /** How long one attempt may take. */
  timeoutMs: number;
  /** Delay before the first retry; each further retry waits twice as long. */
  retryBaseMs: number;
  /** Attempts in all, the first included. */
  attempts: number;
  log: Logger;
}

/**
 * Callback delivery over HTTP: body `JSON.stringify(payload)`, header `X-Sandbox-Signature` with the
 * hex HMAC-SHA256 of that exact body. A non-2xx answer or a network error is retried with the same
 * body (same callback_id) on a doubling schedule. Retries live in this process only: a sandbox
 * stopped meanwhile does not send them (it is a test stand-in, not a durable outbox).
 */
export function startCallbackDelivery(settings: CallbackSettings): CallbackSender {
  const timers = new Set<NodeJS.Timeout>();
  const inFlight = new Set<Promise<Delivery>>();
  let stopped = false;

  async function post(url: string, body: string): Promise<Delivery> {
    try {
      const res = await request(url, {
        method: "POST",
        headers: { "content-type": "application/json", [SIGNATURE_HEADER]: signCallback(settings.secret, body) },
        body,
        signal: AbortSignal.timeout(settings.timeoutMs),
      });
      await res.body.dump().catch(() => undefined);
      return { delivered: res.statusCode >= 200 && res.statusCode < 300, status_code: res.statusCode };
    } catch {
      return { delivered: false };
    }
  }

  function attempt(url: string, body: string, id: string, n: number, delays: number[]): Promise<Delivery> {
    const run = post(url, body).then((result) => {
      settings.log.info({ callback_id: id, attempt: n, ...result }, "callback attempt");
      const delay = delays[n - 1];
      if (!result.delivered && delay !== undefined && !stopped) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          void attempt(url, body, id, n + 1, delays);
        }, delay);
        timers.add(timer);
      }
      return result;
    });
    inFlight.add(run);
    void run.finally(() => inFlight.delete(run));
    return run;
  }

  return {
    send(url, payload) {
      return attempt(url, JSON.stringify(payload), payload.callback_id, 1, retryDelays(settings.retryBaseMs, settings.attempts));
    },
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await Promise.allSettled([...inFlight]);
    },
  };
}
