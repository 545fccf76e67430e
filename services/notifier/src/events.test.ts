import { statusChangedSubject } from "@pgw/proto/subjects";
import { WEBHOOK_STATUSES } from "./domain/message";
import { STATUS_CONSUMERS } from "./events";

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
