import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { scopedSubject } from "@pgw/kit/events";
import { type Logger } from "@pgw/kit/runtime";
import { KeyRequestsAdmittedSchema } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import type { NatsConnection } from "nats";
import { randomUUID } from "node:crypto";
import { Counter, type Registry } from "prom-client";
import { RateLimiter, type RateDecision } from "./rate-limiter";

const SUBJECT = "pgw_live.gateway.key_requests_admitted";
/** How often a replica reports what it admitted: about the most its peers' buckets lag behind it. */
const REPORT_INTERVAL_MS = 100;

export interface KeyRateLimitOptions {
  registry: Registry;
  log: Logger;
  now?: () => number;
}

/**
 * API keys' rate limits (a token bucket per key at its shop's rate, decisions/0023), holding in
 * total across gateway replicas (decisions/0017). Every replica keeps a copy of each key's bucket
 * and decides alone, from memory; every 100 ms it tells the others, over core NATS, how many
 * requests it admitted per key, and each takes as many tokens from its own copy. A bucket thus
 * refills at the rate once, whatever the number of replicas, and `RateLimit-Remaining` counts the
 * requests every replica admitted up to a tenth of a second ago. While NATS is unreachable each
 * replica limits alone (up to the rate per replica).
 */
export class KeyRateLimits {
  private readonly replicaId = randomUUID();
  /** The reports' subject, as seen through the connection's namespace. */
  private readonly subject: string;
  private readonly buckets: RateLimiter;
  /** Requests admitted here since the last report, by API key id, with the rate of the key's shop. */
  private admitted = new Map<string, { requests: number; rps: number }>();
  private readonly peerRequests: Counter;
  private readonly timer: NodeJS.Timeout;
  private readonly subscription: { unsubscribe(): void };

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: KeyRateLimitOptions,
  ) {
    this.buckets = new RateLimiter(options.now);
    this.peerRequests = new Counter({
      name: "gateway_key_rate_peer_requests_total",
      help: "Requests other gateway replicas reported admitting, taken from this replica's copies of the API keys' buckets",
      registers: [options.registry],
    });
    this.subject = scopedSubject(nc, SUBJECT);
    this.subscription = nc.subscribe(this.subject, {
      callback: (err, msg) => (err ? options.log.warn({ err }, "key rate report subscription error") : this.apply(msg.data)),
    });
    this.timer = setInterval(() => this.report(), REPORT_INTERVAL_MS);
    this.timer.unref();
  }

  /** Takes one token from the key's bucket (refilled at `rps`, its shop's rate, holding twice that). */
  take(apiKeyId: string, rps: number): RateDecision {
    const decision = this.buckets.take(apiKeyId, rps);
    if (decision.allowed) {
      const entry = this.admitted.get(apiKeyId);
      if (entry) {
        entry.requests++;
        entry.rps = rps;
      } else {
        this.admitted.set(apiKeyId, { requests: 1, rps });
      }
    }
    return decision;
  }

  /** Reports what is left to report and stops listening. */
  stop(): void {
    clearInterval(this.timer);
    this.report();
    this.subscription.unsubscribe();
  }

  private report(): void {
    if (this.admitted.size === 0) return;
    const keys = [...this.admitted].map(([apiKeyId, a]) => ({ apiKeyId, requests: a.requests, rateLimitRps: a.rps }));
    this.admitted = new Map();
    try {
      this.nc.publish(this.subject, toBinary(KeyRequestsAdmittedSchema, create(KeyRequestsAdmittedSchema, { replicaId: this.replicaId, keys })));
    } catch (err) {
      // Closed connection: peers miss this report, as they would while NATS is unreachable.
      this.options.log.warn({ err }, "key rate report not published");
    }
  }

  private apply(data: Uint8Array): void {
    let report;
    try {
      report = fromBinary(KeyRequestsAdmittedSchema, data);
    } catch (err) {
      return this.options.log.warn({ err }, "undecodable key rate report");
    }
    if (report.replicaId === this.replicaId) return;
    for (const key of report.keys) {
      if (key.requests <= 0 || key.rateLimitRps <= 0) continue;
      this.buckets.charge(key.apiKeyId, key.requests, key.rateLimitRps);
      this.peerRequests.inc(key.requests);
    }
  }
}
