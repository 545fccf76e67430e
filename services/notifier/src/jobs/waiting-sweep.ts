/**
 * The sweep of deliveries waiting for a webhook URL (no due time), in every replica: every
 * `everyMs` (and once at start) it makes due those whose shop has a URL by now (what a race between
 * a URL arriving and a worker parking a delivery could leave behind), and fails those that waited
 * longer than the whole retry schedule.
 */
import { type KitLog } from "@pgw/kit/events";
import { runPeriodically, type Stoppable } from "@pgw/kit/runtime";
import type { DeliveryMetrics } from "./delivery-metrics";
import { failStaleWaiting, wakeWaitingWithUrl, type NotifierDb } from "../store";

export interface WaitingSweepOptions {
  db: NotifierDb;
  log: KitLog;
  metrics: DeliveryMetrics;
  /** How long a delivery may wait for a URL before it fails: the retry schedule's span (retryHorizonMs). */
  horizonMs: number;
  everyMs: number;
  /** Wakes the delivery worker when the sweep made deliveries due. */
  wake(): void;
}

export function startWaitingSweep(opts: WaitingSweepOptions): Stoppable {
  let stopped = false;
  const pass = async () => {
    const woken = await wakeWaitingWithUrl(opts.db);
    const failed = await failStaleWaiting(opts.db, opts.horizonMs);
    if (failed > 0) {
      opts.metrics.deliveries.inc({ outcome: "failed" }, failed);
      opts.log.info({ failed }, "deliveries that waited for a webhook URL too long failed");
    }
    if (woken > 0) opts.wake();
  };
  const onError = (err: unknown) => {
    if (!stopped) opts.log.warn({ err }, "waiting deliveries sweep failed");
  };
  const periodic = runPeriodically(pass, opts.everyMs, onError);
  const first = pass().catch(onError);
  return {
    async stop() {
      stopped = true;
      await Promise.all([periodic.stop(), first]);
    },
  };
}
