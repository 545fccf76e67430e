import { create } from "@bufbuild/protobuf";
import { DEV_DATA_KEYS, parseDataKeys } from "@pgw/kit/db";
import { OperationStatusChangedSchema } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { OperationSchema } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { statusChangedSubject } from "@pgw/proto/subjects";
import { randomUUID } from "node:crypto";
import { WEBHOOK_STATUSES } from "./domain/message";
import { STATUS_CONSUMERS, statusConsumerOptions, type ConsumerDeps } from "./events";

/** Whether NATS delivers `subject` to a consumer filtering on `filter` (`*` one token, `>` the rest). */
function matches(filter: string, subject: string): boolean {
  const f = filter.split(".");
  const s = subject.split(".");
  for (let i = 0; i < f.length; i++) {
    if (f[i] === ">") return s.length > i;
    if (i >= s.length || (f[i] !== "*" && f[i] !== s[i])) return false;
  }
  return f.length === s.length;
}

const STATUSES = ["creating", "pending", "awaiting_confirmation", "manual_check", "completed", "cancelled", "declined", "expired"];

describe("the notifier's status consumers", () => {
  it("are sent exactly the webhook statuses, each by one consumer", () => {
    for (const status of STATUSES) {
      const sentTo = STATUS_CONSUMERS.filter((c) => matches(c.filterSubject, statusChangedSubject(status)));
      expect({ status, sentTo: sentTo.length }).toEqual({ status, sentTo: WEBHOOK_STATUSES.has(status) ? 1 : 0 });
    }
  });

  it("have distinct durable names", () => {
    expect(new Set(STATUS_CONSUMERS.map((c) => c.durable)).size).toBe(STATUS_CONSUMERS.length);
  });
});

describe("a status event's webhook number", () => {
  const CARD = "2200700012345678";
  const keys = parseDataKeys(DEV_DATA_KEYS, undefined);
  const otherKeys = parseDataKeys(`other:${Buffer.alloc(32, 7).toString("base64")}`, undefined);

  /** The number the status consumer's prepare step finds for `fields`, what it asked operations and what it warned. */
  async function numberOf(fields: { sealedNumber?: string; clearNumber?: string }) {
    const asked: string[] = [];
    const warnings: object[] = [];
    const ignore = () => undefined;
    const deps = {
      keys,
      log: { debug: ignore, info: ignore, warn: (obj: object) => void warnings.push(obj), error: ignore },
      evidence: async () => null,
      numberOf: async (_shopId: string, operationId: string) => {
        asked.push(operationId);
        return "from-operations";
      },
    } as unknown as ConsumerDeps;
    const [shopId, operationId] = [randomUUID(), randomUUID()];
    const ev = create(OperationStatusChangedSchema, {
      eventId: randomUUID(),
      operationId,
      shopId,
      status: "cancelled",
      operation: create(OperationSchema, { operationId, shopId, status: "cancelled", number: fields.clearNumber }),
      sealedNumber: fields.sealedNumber,
    });
    const prepared = await statusConsumerOptions(deps, STATUS_CONSUMERS[0]).prepare!(ev, { eventId: ev.eventId, subject: statusChangedSubject("cancelled"), redelivered: false, storedAt: new Date() });
    return { number: prepared.number, askedOperations: asked.length, warnings: warnings.length };
  }

  it("is the event's sealed number opened with the unit's keys, without asking operations", async () => {
    expect(await numberOf({ sealedNumber: keys.seal(CARD) })).toEqual({ number: CARD, askedOperations: 0, warnings: 0 });
  });

  it("is asked of operations when the event carries none (published before it carried one)", async () => {
    expect(await numberOf({})).toEqual({ number: "from-operations", askedOperations: 1, warnings: 0 });
  });

  it("is asked of operations, with a warning, when the event's is sealed under a key the unit does not hold", async () => {
    expect(await numberOf({ sealedNumber: otherKeys.seal(CARD) })).toEqual({ number: "from-operations", askedOperations: 1, warnings: 1 });
  });

  it("is an old event's clear number as it is", async () => {
    expect(await numberOf({ clearNumber: CARD })).toEqual({ number: CARD, askedOperations: 0, warnings: 0 });
  });
});
