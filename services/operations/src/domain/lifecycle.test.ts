import { endsUncaptured, TERMINAL, transition, type LifecycleEvent, type Status } from "./lifecycle";
import { TERMINAL_STATUSES } from "@pgw/proto/subjects";

const cases: [Status, LifecycleEvent, string][] = [
  ["creating", { kind: "allocated", requiresReceipt: false }, "pending"],
  ["creating", { kind: "allocated", requiresReceipt: true }, "awaiting_confirmation"],
  ["creating", { kind: "cancel", type: "payment" }, "cancelled"],
  ["creating", { kind: "provider_completed" }, "refused:not_applicable"],
  ["pending", { kind: "provider_completed" }, "completed"],
  ["pending", { kind: "provider_declined" }, "declined"],
  ["pending", { kind: "provider_expired" }, "expired"],
  ["pending", { kind: "cancel", type: "payment" }, "cancelled"],
  ["pending", { kind: "cancel", type: "payout" }, "refused:not_cancellable"],
  ["awaiting_confirmation", { kind: "review", outcome: "manual_check" }, "manual_check"],
  ["awaiting_confirmation", { kind: "cancel", type: "payment" }, "cancelled"],
  ["awaiting_confirmation", { kind: "provider_completed" }, "refused:not_applicable"],
  ["awaiting_confirmation", { kind: "provider_declined" }, "refused:not_applicable"],
  ["awaiting_confirmation", { kind: "provider_expired" }, "expired"],
  ["manual_check", { kind: "provider_completed" }, "refused:not_applicable"],
  ["pending", { kind: "review", outcome: "completed" }, "refused:not_applicable"],
  ["manual_check", { kind: "manual_resolution", decision: "approve" }, "completed"],
  ["manual_check", { kind: "manual_resolution", decision: "decline" }, "declined"],
  ["manual_check", { kind: "cancel", type: "payment" }, "cancelled"],
  ["manual_check", { kind: "provider_expired" }, "refused:not_applicable"],
  ["completed", { kind: "cancel", type: "payment" }, "refused:already_terminal"],
  ["cancelled", { kind: "provider_completed" }, "refused:already_terminal"],
  ["expired", { kind: "allocated", requiresReceipt: false }, "refused:already_terminal"],
];

describe("operation lifecycle", () => {
  it.each(cases)("%s + %j → %s", (from, event, expected) => {
    const result = transition(from, event);
    expect("to" in result ? result.to : `refused:${result.refused}`).toBe(expected);
  });
});

describe("endsUncaptured", () => {
  it("holds for every terminal status but completed, whose figures settle to the capture instead", () => {
    const all: Status[] = ["creating", "pending", "awaiting_confirmation", "manual_check", "completed", "cancelled", "declined", "expired"];
    expect(all.filter(endsUncaptured)).toEqual(["cancelled", "declined", "expired"]);
  });
});

describe("terminal statuses", () => {
  it("are the ones status events are published as terminal (@pgw/proto/subjects), which ledger, receipts and routing filter on", () => {
    expect([...TERMINAL].sort()).toEqual([...TERMINAL_STATUSES].sort());
  });
});
