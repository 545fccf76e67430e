/**
 * Change signals: core NATS messages without payload (subjects under `pgw_live.`, never stored)
 * saying "what you keep of my rows may be out of date". A unit keeping a copy of another unit's
 * rarely changing rows follows the owner's signal: it keeps values only while subscribed, drops them
 * at every signal, and keeps nothing while disconnected, since signals sent meanwhile are lost.
 * No business rules.
 */
import type { NatsConnection } from "nats";
import { scopedSubject, type KitLog } from "./nats";

/** A copy kept while its owner's changes are heard (a NotifiedCache fits). */
export interface KeptCopy {
  startKeeping(): void;
  forget(): void;
  stopKeeping(): void;
}

/** Says on `subject` that rows others may keep copies of have changed. */
export function signalChange(nc: NatsConnection, subject: string): void {
  nc.publish(scopedSubject(nc, subject));
}

/**
 * Keeps `copy` in step with the signals on `subject`: it starts keeping once the server has the
 * subscription (a flush round trip), forgets at every signal, and stops keeping at a disconnect
 * until resubscribed after the reconnect.
 */
export function followChangeSignal(nc: NatsConnection, subject: string, copy: KeptCopy, log: KitLog): { stop(): Promise<void> } {
  // Bumped by every disconnect: a flush begun before it must not start keeping after it.
  let connection = 0;
  const sub = nc.subscribe(scopedSubject(nc, subject), {
    callback: (err) => {
      if (!err) return copy.forget();
      log.warn({ err, subject }, "change signal subscription failed; keeping nothing");
      copy.stopKeeping();
    },
  });
  const keepOnceSubscribed = () => {
    const current = connection;
    nc.flush().then(
      () => {
        if (current === connection && !sub.isClosed()) copy.startKeeping();
      },
      (err: unknown) => log.warn({ err, subject }, "change signal subscription not confirmed; keeping nothing"),
    );
  };
  keepOnceSubscribed();
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect") {
        connection++;
        copy.stopKeeping();
      } else if (status.type === "reconnect") keepOnceSubscribed();
    }
  })();
  return {
    async stop() {
      sub.unsubscribe();
      copy.stopKeeping();
    },
  };
}
