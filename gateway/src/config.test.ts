import { ConfigError } from "@pgw/kit/runtime";
import { loadGatewayConfig } from "./config";

const secrets = { ADMIN_TOKEN: "admin-token-long-random", API_KEY_HASH_SECRET: "hash-secret-long-random", RECEIPT_URL_SECRET: "link-secret-long-random" };

describe("gateway configuration", () => {
  it("defaults the payment page to this machine only in local mode", () => {
    expect(loadGatewayConfig({ LOCAL_MODE: "true" }).PAYMENT_PAGE_HOST).toBe("http://127.0.0.1:8080/pay");
    // Outside it, a loopback link in payment_url would reach no payer.
    expect(() => loadGatewayConfig(secrets)).toThrow(new ConfigError("PAYMENT_PAGE_HOST", "is required"));
    expect(loadGatewayConfig({ ...secrets, PAYMENT_PAGE_HOST: "https://pay.example/pay" }).PAYMENT_PAGE_HOST).toBe("https://pay.example/pay");
  });

  it("refuses to start with a TRUSTED_PROXIES entry that is no address or range, naming it", () => {
    expect(loadGatewayConfig({ LOCAL_MODE: "true", TRUSTED_PROXIES: "10.0.0.0/8, ::1" }).TRUSTED_PROXIES).toHaveLength(2);
    expect(loadGatewayConfig({ LOCAL_MODE: "true" }).TRUSTED_PROXIES).toEqual([]);
    expect(() => loadGatewayConfig({ LOCAL_MODE: "true", TRUSTED_PROXIES: "10.0.0.0/8, ingress.local" })).toThrow(
      new ConfigError("TRUSTED_PROXIES", '"ingress.local" is not an IP address or CIDR range (IPv4 written as IPv4) (got "10.0.0.0/8, ingress.local")'),
    );
  });
});
