import { fromBinary } from "@bufbuild/protobuf";
import { scopedSubject } from "@pgw/kit/events";
import { type Logger } from "@pgw/kit/runtime";
import { ApiKeyRevokedSchema } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import type { NatsConnection } from "nats";
import type { KeyCache } from "./key-cache";

const SUBJECT = "pgw.accounts.api_key_revoked";

/**
 * Evicts revoked keys from this replica's cache as their events arrive (a plain NATS subscription
 * on the JetStream subject: every replica gets every event). While NATS is unreachable events may
 * be missed, so the cache is emptied on every reconnect.
 */
export function watchRevocations(nc: NatsConnection, cache: KeyCache, log: Logger): { stop(): void } {
  const sub = nc.subscribe(scopedSubject(nc, SUBJECT), {
    callback: (err, msg) => {
      if (err) return log.warn({ err }, "revocation subscription error");
      try {
        const event = fromBinary(ApiKeyRevokedSchema, msg.data);
        cache.evict(event.keyHash, event.apiKeyId);
        log.info({ api_key_id: event.apiKeyId }, "revoked api key evicted");
      } catch (e) {
        log.warn({ err: e }, "undecodable revocation event");
      }
    },
  });
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect" || status.type === "reconnect") cache.clear();
    }
  })();
  return { stop: () => sub.unsubscribe() };
}
