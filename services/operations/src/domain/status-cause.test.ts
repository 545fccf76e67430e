import { transition, type LifecycleEvent, type Status } from "./lifecycle";
import { auditActionOf, statusCause, type StatusCause } from "./status-cause";

const STATUSES: Status[] = ["creating", "pending", "awaiting_confirmation", "manual_check", "completed", "cancelled", "declined", "expired"];
const EVENTS: [LifecycleEvent, StatusCause][] = [
  [{ kind: "allocated", requiresReceipt: false }, "allocated"],
  [{ kind: "allocated", requiresReceipt: true }, "allocated"],
  [{ kind: "provider_completed" }, "provider"],
  [{ kind: "provider_declined" }, "provider"],
  [{ kind: "provider_expired" }, "provider"],
  [{ kind: "review", outcome: "completed" }, "receipt_review"],
  [{ kind: "review", outcome: "manual_check" }, "receipt_review"],
  [{ kind: "review", outcome: "declined" }, "receipt_review"],
  [{ kind: "manual_resolution", decision: "approve" }, "manual_check"],
  [{ kind: "manual_resolution", decision: "decline" }, "manual_check"],
  [{ kind: "cancel", type: "payment" }, "cancel"],
];

describe("statusCause", () => {
  // Every change the lifecycle can make is told apart by its pair of statuses alone.
  const changes = STATUSES.flatMap((from) =>
    EVENTS.flatMap(([event, cause]) => {
      const next = transition(from, event);
      return "to" in next ? [[from, next.to, cause, event.kind] as const] : [];
    }),
  );

  test.each(changes)("%s → %s is caused by %s (%s)", (from, to, cause) => {
    expect(statusCause(from, to)).toBe(cause);
  });

  test.each([
    ["receipt_review", "manual_check", "review:manual_check"],
    ["manual_check", "completed", "manual_check:approve"],
    ["manual_check", "declined", "manual_check:decline"],
    ["provider", "completed", null],
    ["cancel", "cancelled", null],
  ] as const)("a %s change to %s was audited as %s", (cause, to, action) => {
    expect(auditActionOf(cause, to)).toBe(action);
  });
});
