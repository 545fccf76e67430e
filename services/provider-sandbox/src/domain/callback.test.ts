import { createHmac } from "node:crypto";
import { retryDelays, signCallback, verifyCallback } from "./callback";

describe("callback signature", () => {
  const body = '{"reference":"r","status":"completed"}';

  it("is the hex HMAC-SHA256 of the raw body", () => {
    expect(signCallback("s", body)).toBe(createHmac("sha256", "s").update(body).digest("hex"));
  });

  it.each([
    ["s", body, true],
    ["other", body, false],
    ["s", body + " ", false],
  ])("verifies under secret %s: %s", (secret, raw, ok) => expect(verifyCallback("s", raw, signCallback(secret, body))).toBe(ok));
});

describe("retryDelays", () => {
  it("doubles from the base, one fewer than the attempts", () => expect(retryDelays(2000, 5)).toEqual([2000, 4000, 8000, 16000]));
  it("none for one attempt", () => expect(retryDelays(2000, 1)).toEqual([]));
});
