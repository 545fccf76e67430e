import { ConfigError } from "@pgw/kit";
import { loadGatewayConfig } from "./config";

const secrets = { ADMIN_TOKEN: "admin-token-long-random", API_KEY_HASH_SECRET: "hash-secret-long-random", RECEIPT_URL_SECRET: "link-secret-long-random" };

describe("gateway configuration", () => {
  it("defaults the payment page to this machine only in local mode", () => {
    expect(loadGatewayConfig({ LOCAL_MODE: "true" }).PAYMENT_PAGE_HOST).toBe("http://127.0.0.1:8080/pay");
    // Outside it, a loopback link in payment_url would reach no payer.
    expect(() => loadGatewayConfig(secrets)).toThrow(new ConfigError("PAYMENT_PAGE_HOST", "is required"));
    expect(loadGatewayConfig({ ...secrets, PAYMENT_PAGE_HOST: "https://pay.example/pay" }).PAYMENT_PAGE_HOST).toBe("https://pay.example/pay");
  });
});
