import { ConfigError } from "@pgw/kit/runtime";
import { loadReceiptsConfig } from "../src/config";

const DB = { DATABASE_URL: "postgres://postgres@127.0.0.1:5432/receipts" };

describe("receipts configuration", () => {
  it("has local defaults for the link origin and secret in LOCAL_MODE", () => {
    expect(loadReceiptsConfig({ ...DB, LOCAL_MODE: "true" })).toMatchObject({ PUBLIC_BASE_URL: "http://127.0.0.1:8080", RECEIPT_URL_SECRET: expect.any(String) });
  });

  it("requires both outside LOCAL_MODE, and HTTPS links", () => {
    expect(() => loadReceiptsConfig({ ...DB, RECEIPT_URL_SECRET: "a-long-random-secret" })).toThrow(new ConfigError("PUBLIC_BASE_URL", "is required"));
    expect(() => loadReceiptsConfig({ ...DB, PUBLIC_BASE_URL: "https://pay.example.com" })).toThrow(/RECEIPT_URL_SECRET is required/);
    expect(() => loadReceiptsConfig({ ...DB, PUBLIC_BASE_URL: "http://pay.example.com", RECEIPT_URL_SECRET: "a-long-random-secret" })).toThrow(/PUBLIC_BASE_URL must be an https URL/);
    expect(loadReceiptsConfig({ ...DB, PUBLIC_BASE_URL: "https://pay.example.com/", RECEIPT_URL_SECRET: "a-long-random-secret" }).PUBLIC_BASE_URL).toBe("https://pay.example.com");
  });
});
