import { rfc3339, webhookBody, webhookIdFor, webhookTypeFor } from "./message";

describe("webhook messages", () => {
  it.each([
    ["awaiting_confirmation", "operation.awaiting_confirmation"],
    ["completed", "operation.completed"],
    ["cancelled", "operation.cancelled"],
    ["declined", "operation.declined"],
    ["expired", "operation.expired"],
    ["pending", null],
    ["manual_check", null],
    ["creating", null],
    ["", null],
  ])("entering %s fires %s", (status, type) => {
    expect(webhookTypeFor(status)).toBe(type);
  });

  it("derives the webhook-id from the event id, so duplicates share it", () => {
    expect(webhookIdFor("0B6E1C2A-0000-4000-8000-000000000001")).toBe("msg_0b6e1c2a-0000-4000-8000-000000000001");
  });

  it("writes the body in the order id, type, created_at, data", () => {
    expect(webhookBody("msg_x", "operation.completed", "2026-01-01T00:00:00.000Z", { status: "completed" })).toBe(
      '{"id":"msg_x","type":"operation.completed","created_at":"2026-01-01T00:00:00.000Z","data":{"status":"completed"}}',
    );
  });

  it("normalises created_at to RFC 3339 UTC, falling back when the event has none", () => {
    expect(rfc3339("2026-11-22T13:08:26.385+03:00", new Date(0))).toBe("2026-11-22T10:08:26.385Z");
    expect(rfc3339("", new Date(Date.UTC(2026, 0, 2)))).toBe("2026-01-02T00:00:00.000Z");
  });
});
