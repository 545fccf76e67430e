/**
 * Change signals: core NATS messages without payload (subjects under `pgw_live.`, never stored)
 * saying "what you keep of my rows may be out of date". A unit keeping a copy of another unit's
 * rarely changing rows follows the owner's signal: it keeps values only while subscribed, drops them
 * at every signal, and keeps nothing while disconnected, since signals sent meanwhile are lost; the
 * owner sends its signal again after each reconnect of its own, for the same reason.
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

/**
 * Says on `subject` that rows others may keep copies of have changed: `signal()` at each change,
 * and again by itself after every reconnect, since a signal sent while disconnected may be lost.
 */
export function changeSignal(nc: NatsConnection, subject: string): { signal(): void; stop(): Promise<void> } {
  const signal = () => nc.publish(scopedSubject(nc, subject));
  let stopped = false;
  void (async () => {
    for await (const status of nc.status()) {
      if (stopped) return;
      if (status.type === "reconnect") signal();
    }
  })();
  return {
    signal,
    async stop() {
      stopped = true;
    },
  };
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
