import { Webhook } from "standardwebhooks";
import { generateSecret, secretKey, signatureHeader, signV1 } from "./signing";

const body = JSON.stringify({ id: "msg_1", type: "operation.completed", created_at: "2026-11-22T10:00:00.000Z", data: { amount: "10.00", name: "Иван" } });

describe("Standard Webhooks signing", () => {
  it("makes whsec_ secrets of 32 random bytes", () => {
    const a = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secretKey(a)).toHaveLength(32);
    expect(generateSecret()).not.toBe(a);
  });

  it("signs so that the standardwebhooks library verifies the message", () => {
    const secret = generateSecret();
    const ts = Math.floor(Date.now() / 1000);
    const headers = { "webhook-id": "msg_1", "webhook-timestamp": String(ts), "webhook-signature": signatureHeader([secret], "msg_1", ts, body) };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(signV1(secret, "msg_1", ts, body)).toBe(new Webhook(secret).sign("msg_1", new Date(ts * 1000), body));
  });

  it("fails verification under another secret, another id, timestamp or body", () => {
    const secret = generateSecret();
    const ts = Math.floor(Date.now() / 1000);
    const sig = signatureHeader([secret], "msg_1", ts, body);
    const verify = (s: string, id: string, t: number, b: string) => () => new Webhook(s).verify(b, { "webhook-id": id, "webhook-timestamp": String(t), "webhook-signature": sig });
    expect(verify(generateSecret(), "msg_1", ts, body)).toThrow();
    expect(verify(secret, "msg_2", ts, body)).toThrow();
    expect(verify(secret, "msg_1", ts + 1, body)).toThrow();
    expect(verify(secret, "msg_1", ts, body.replace("10.00", "11.00"))).toThrow();
  });

  it("sends one signature per secret during a rotation; either secret verifies", () => {
    const [next, previous] = [generateSecret(), generateSecret()];
    const ts = Math.floor(Date.now() / 1000);
    const header = signatureHeader([next, previous], "msg_9", ts, body);
    expect(header.split(" ")).toHaveLength(2);
    const headers = { "webhook-id": "msg_9", "webhook-timestamp": String(ts), "webhook-signature": header };
    expect(new Webhook(next).verify(body, headers)).toBeTruthy();
    expect(new Webhook(previous).verify(body, headers)).toBeTruthy();
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow();
  });
});
