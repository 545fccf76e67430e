/**
 * The delivery worker: takes due deliveries from the database and POSTs them, many at once.
 *
 * - Bounded concurrency: at most `concurrency` attempts in flight in this process, and at most
 *   `perShopConcurrency` for one shop (2 while its endpoint struggles: domain/shop-slots), so a slow
 *   or dead endpoint only ever occupies its own slots; other shops' deliveries keep flowing. Shops
 *   at their cap are left out of the claim, and it takes of each other shop at most its free slots
 *   (domain/shop-slots shopsWithFewerSlots, applied by the claim's statement).
 * - Replicas share the queue through `FOR UPDATE SKIP LOCKED` and a lease (see store claimDue).
 * - Woken at once when this process makes a delivery due (wake(), at its commit) and by a short poll
 *   (retries coming due, other replicas' work, missed notifications). A freed slot claims again
 *   only when due deliveries may be waiting for it: the last claim left some behind (a limit or a
 *   shop's cap), skipped busy shops, or a wake-up came since; otherwise that claim would find nothing.
 * - Every outcome is written before the next step (attempt log, next due time), so a restart
 *   continues where the last process stopped.
 * - Each attempt is a span in the trace of the status change its delivery announces.
 */
import type { DataKeys } from "@pgw/kit/db";
import type { KitLog } from "@pgw/kit/events";
import { continuingTrace, outsideTraces, type Stoppable } from "@pgw/kit/runtime";
import { setMaxListeners } from "node:events";
import type { NotifierConfig } from "../config";
import type { PostWebhook } from "../connectors/webhook-http";
import { decideAfterAttempt } from "../domain/attempt-outcome";
import { attemptStruggled, shopsWithFewerSlots } from "../domain/shop-slots";
import { signatureHeader } from "../domain/signing";
import type { DeliveryMetrics } from "./delivery-metrics";
import { claimDue, recordAttempt, releaseClaim, settleWithoutAttempt, signingSecrets, type ClaimedDelivery, type NotifierDb } from "../store";

/** Margin of a delivery's lease beyond the HTTP deadline (recording the outcome, clock skew). */
const LEASE_MARGIN_MS = 50_000;

/** The worker's settings from the unit's configuration (config.ts). */
export function deliveryWorkerSettings(config: NotifierConfig) {
  return {
    schedule: config.retrySchedule,
    concurrency: config.WEBHOOK_CONCURRENCY,
    perShopConcurrency: config.WEBHOOK_PER_SHOP_CONCURRENCY,
    pollMs: config.WEBHOOK_POLL_MS,
    gatherMs: config.WEBHOOK_CLAIM_GATHER_MS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    leaseMs: config.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS,
  } satisfies Partial<WorkerOptions>;
}

/** Starts a delivery worker; `wake()` asks it to look for due deliveries now, `stop()` lets its attempts in flight finish. */
export function startDeliveryWorker(opts: WorkerOptions): DeliveryWorker {
  const worker = new DeliveryWorker(opts);
  worker.start();
  return worker;
}

export interface WorkerOptions {
  db: NotifierDb;
  /** Open the stored bodies and signing secrets, and seal a secret made on first need. */
  keys: DataKeys;
  log: KitLog;
  metrics: DeliveryMetrics;
  post: PostWebhook;
  /** The body an attempt sends, from the stored one (e.g. receipt links renewed); default: as stored. */
  bodyAt?: (payload: string, now: Date) => string;
  /** Retry schedule (delay before each attempt of a round, ms). */
  schedule: readonly number[];
  concurrency: number;
  perShopConcurrency: number;
  /** Poll interval for due deliveries, ms. */
  pollMs: number;
  /** Per-attempt HTTP deadline, ms. */
  timeoutMs: number;
  /** How long a claimed delivery is reserved for its attempt (longer than timeoutMs). */
  leaseMs: number;
  /**
   * While deliveries keep coming, a wake-up waits this long before claiming, so the deliveries that
   * became due meanwhile share one claim (ms, default 0). An idle worker claims at once.
   */
  gatherMs?: number;
  /** Source of jitter in [0, 1). */
  random?: () => number;
}

export class DeliveryWorker implements Stoppable {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly perShop = new Map<string, number>();
  /** Shops whose endpoint's last attempt struggled (see domain/shop-slots). */
  private readonly struggling = new Set<string>();
  private readonly abort = new AbortController();
  private readonly random: () => number;
  private stopped = false;
  private filling: Promise<void> | undefined;
  private again = false;
  /** The last claim found deliveries: wake-ups are gathered (see WorkerOptions.gatherMs). */
  private lastClaimFound = false;
  /** Due deliveries may be waiting untaken (see the class comment): a freed slot claims. */
  private mayHaveDue = true;
  private gathering: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: WorkerOptions) {
    this.random = opts.random ?? Math.random;
    setMaxListeners(0, this.abort.signal); // one listener per attempt in flight
  }

  start(): void {
    this.pollTimer = setInterval(() => this.wake(), this.opts.pollMs);
    this.wake();
  }

  /**
   * Looks for due deliveries (coalesced: one claim loop at a time, rerun when asked meanwhile; while
   * busy, after `gatherMs`).
   */
  wake(): void {
    this.mayHaveDue = true;
    // Woken at a consumer's commit, in its span: the claim serves every shop's deliveries, not that event's.
    outsideTraces(() => this.claimSoon());
  }

  private claimSoon(): void {
    if (this.stopped || this.gathering) return;
    if (this.filling) {
      this.again = true;
      return;
    }
    const gatherMs = this.opts.gatherMs ?? 0;
    if (this.lastClaimFound && gatherMs > 0) {
      this.gathering = setTimeout(() => {
        this.gathering = undefined;
        this.lastClaimFound = false;
        this.claimSoon();
      }, gatherMs);
      return;
    }
    this.filling = this.fill().finally(() => {
      this.filling = undefined;
      if (this.again) {
        this.again = false;
        this.claimSoon();
      }
    });
  }

  /**
   * Stops claiming and lets the attempts in flight finish and be recorded: each ends by its
   * timeout. One still running a second past that is interrupted, and its delivery becomes due
   * again (the receiver may then get it twice, with the same webhook-id).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.gathering);
    clearInterval(this.pollTimer);
    const interrupt = setTimeout(() => this.abort.abort(), this.opts.timeoutMs + 1000);
    await this.filling;
    await Promise.all([...this.inFlight]);
    clearTimeout(interrupt);
  }

  private async fill(): Promise<void> {
    const { concurrency, perShopConcurrency } = this.opts;
    try {
      while (!this.stopped && this.inFlight.size < concurrency) {
        const shopSlots = shopsWithFewerSlots(perShopConcurrency, this.perShop, this.struggling);
        const busy = [...shopSlots.values()].some((free) => free === 0);
        // A wake-up from here on may be for a row this claim's snapshot misses: it sets this again.
        this.mayHaveDue = false;
        const { claimed, full, passedOver } = await claimDue(this.opts.db, { limit: concurrency - this.inFlight.size, perShop: perShopConcurrency, shopSlots, leaseMs: this.opts.leaseMs });
        this.lastClaimFound = claimed.length > 0;
        if (full || passedOver || busy) this.mayHaveDue = true;
        if (claimed.length === 0) return;
        // Count the slots before any await, so the next claim already leaves these shops' caps out.
        for (const d of claimed) this.perShop.set(d.shopId, (this.perShop.get(d.shopId) ?? 0) + 1);
        // The claim brought each shop's secrets; a shop that has none yet gets one now.
        let made: Map<string, string[]>;
        try {
          const shops = [...new Set(claimed.filter((d) => d.endpointUrl && !d.endpointDisabled && d.secrets.length === 0).map((d) => d.shopId))];
          made = shops.length ? await signingSecrets(this.opts.db, this.opts.keys, shops) : new Map();
        } catch (err) {
          for (const d of claimed) this.release(d.shopId);
          await Promise.all(claimed.map((d) => releaseClaim(this.opts.db, d).catch(() => undefined)));
          throw err;
        }
        for (const d of claimed) this.launch(d, made.get(d.shopId) ?? d.secrets);
        if (!full) return; // what was passed over waits for its shop's slot
      }
    } catch (err) {
      this.mayHaveDue = true;
      if (!this.stopped) this.opts.log.warn({ err }, "delivery worker: claim failed; retrying at the next poll");
    }
  }

  private release(shopId: string): void {
    const n = (this.perShop.get(shopId) ?? 1) - 1;
    if (n <= 0) this.perShop.delete(shopId);
    else this.perShop.set(shopId, n);
  }

  private launch(d: ClaimedDelivery, secrets: string[]): void {
    const traced = { attributes: { "pgw.webhook.id": d.webhookId, "pgw.webhook.attempt": d.attempts + 1 } };
    const run = continuingTrace(d.traceparent, "webhook delivery", traced, () => this.attempt(d, secrets))
      .catch((err) => this.opts.log.error({ err, delivery_id: d.id }, "delivery worker: attempt could not be recorded; retried after its lease"))
      .finally(() => {
        this.inFlight.delete(run);
        this.release(d.shopId);
        if (this.mayHaveDue) this.claimSoon();
      });
    this.inFlight.add(run);
  }

  /** One attempt of `d`, signed with the shop's `secrets` (as stored, sealed). */
  private async attempt(d: ClaimedDelivery, secrets: string[]): Promise<void> {
    const { db, metrics, log } = this.opts;
    const url = d.endpointUrl;
    if (!url) {
      await settleWithoutAttempt(db, d, "waiting");
      this.mayHaveDue = true; // due again at once if a URL arrived meanwhile
      return;
    }
    if (d.endpointDisabled) {
      await settleWithoutAttempt(db, d, "disabled");
      metrics.deliveries.inc({ outcome: "disabled" });
      return;
    }
    const startedAt = new Date();
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    // Opened for this attempt alone: a value that cannot be opened fails only this delivery
    // (logged, tried again after its lease), never the claim of every other.
    const stored = this.opts.keys.read(d.payload);
    const body = this.opts.bodyAt?.(stored, startedAt) ?? stored;
    const res = await this.opts.post({
      url,
      headers: {
        "content-type": "application/json",
        "webhook-id": d.webhookId,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signatureHeader(secrets.map((s) => this.opts.keys.read(s)), d.webhookId, timestamp, body),
      },
      body,
      timeoutMs: this.opts.timeoutMs,
      signal: this.abort.signal,
    });
    if (this.abort.signal.aborted && res.statusCode === undefined) return releaseClaim(db, d);
    if (attemptStruggled(res.statusCode, res.latencyMs, this.opts.timeoutMs)) this.struggling.add(d.shopId);
    else this.struggling.delete(d.shopId);

    const decision = decideAfterAttempt(res.statusCode, d.roundAttempts + 1, this.opts.schedule, this.random());
    const status = decision.kind === "retry" ? "pending" : decision.kind;
    const applied = await recordAttempt(db, d, {
      startedAt,
      statusCode: res.statusCode,
      latencyMs: res.latencyMs,
      snippet: res.snippet,
      error: res.error,
      status,
      retryInMs: decision.kind === "retry" ? decision.delayMs : undefined,
      url,
    });
    metrics.attemptSeconds.observe(res.latencyMs / 1000);
    metrics.attempts.inc({ result: res.statusCode === undefined ? "no_response" : decision.kind === "delivered" ? "success" : res.statusCode === 410 ? "gone" : "http_error" });
    if (applied === null) {
      log.warn({ delivery_id: d.id, webhook_id: d.webhookId }, "delivery worker: lease lost during the attempt; outcome logged only");
      return;
    }
    // A 410 from a URL the shop replaced meanwhile was not applied: the delivery is due again now.
    const retryInMs = applied !== "pending" ? undefined : decision.kind === "retry" ? decision.delayMs : 0;
    const outcome = retryInMs === undefined ? applied : "retry";
    if (retryInMs !== undefined && retryInMs <= 0) this.mayHaveDue = true; // due again now
    if (outcome !== "retry") metrics.deliveries.inc({ outcome });
    if (outcome === "delivered") metrics.deliveryLatencySeconds.observe((Date.now() - d.createdAt.getTime()) / 1000);
    else log.info({ delivery_id: d.id, webhook_id: d.webhookId, shop_id: d.shopId, status_code: res.statusCode, error: res.error, outcome, retry_in_ms: retryInMs }, "webhook attempt failed");
  }
}
