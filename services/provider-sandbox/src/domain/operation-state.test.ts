import { fundsState, transition, type OperationEvent, type OperationKind, type OperationStatus } from "./operation-state";

describe("transition", () => {
  it.each<[OperationKind, OperationStatus, OperationEvent, string, string | null]>([
    ["payin", "created", "pay", "paid", "completed"],
    ["payout", "created", "settle", "settled", "completed"],
    ["payin", "created", "decline", "declined", "declined"],
    ["payout", "created", "decline", "declined", "declined"],
    ["payin", "created", "expire", "expired", "expired"],
    ["payin", "created", "cancel", "cancelled", null],
    ["payout", "created", "cancel", "cancelled", null],
  ])("%s %s --%s--> %s (callback %s)", (kind, status, event, to, callback) => {
    expect(transition(kind, status, event)).toEqual({ ok: true, to, callback });
  });

  it.each<[OperationKind, OperationStatus, OperationEvent, string]>([
    ["payin", "created", "settle", "wrong_kind"],
    ["payout", "created", "pay", "wrong_kind"],
    ["payin", "paid", "pay", "not_created"],
    ["payin", "paid", "decline", "not_created"],
    ["payout", "settled", "cancel", "not_created"],
    ["payin", "cancelled", "expire", "not_created"],
    ["payin", "expired", "decline", "not_created"],
    ["payout", "declined", "settle", "not_created"],
  ])("%s %s --%s--> refused (%s)", (kind, status, event, reason) => {
    expect(transition(kind, status, event)).toEqual({ ok: false, reason });
  });
});

describe("fundsState", () => {
  it.each<[OperationStatus, string]>([
    ["created", "in_progress"],
    ["paid", "arrived"],
    ["settled", "arrived"],
    ["declined", "not_found"],
    ["expired", "not_found"],
    ["cancelled", "not_found"],
  ])("%s → %s", (status, state) => expect(fundsState(status)).toBe(state));
});
