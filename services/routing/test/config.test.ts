import { ConfigError } from "@pgw/kit/runtime";
import { loadRoutingConfig } from "../src/config";

describe("routing configuration", () => {
  it("has local defaults for the sandbox in LOCAL_MODE", () => {
    const c = loadRoutingConfig({ LOCAL_MODE: "true" });
    expect(c).toEqual(
      expect.objectContaining({
        SANDBOX_URL: "http://127.0.0.1:8090",
        SANDBOX_CALLBACK_SECRET: "sandbox-callback-secret",
        CALLBACK_BASE_URL: undefined,
        PROVIDER_TIMEOUT_MS: 5000,
        ALLOCATION_BUDGET_MS: 15000,
      }),
    );
  });

  it("seeds the sandbox provider and its routes only in LOCAL_MODE unless told (real money must never route to it)", () => {
    expect(loadRoutingConfig({ LOCAL_MODE: "true" }).SEED_SANDBOX).toBe(true);
    const deployed = { SANDBOX_CALLBACK_SECRET: "a-long-random-secret", CALLBACK_BASE_URL: "https://routing.example" };
    expect(loadRoutingConfig(deployed).SEED_SANDBOX).toBe(false);
    expect(loadRoutingConfig({ ...deployed, SEED_SANDBOX: "true" }).SEED_SANDBOX).toBe(true);
    expect(loadRoutingConfig({ LOCAL_MODE: "true", SEED_SANDBOX: "false" }).SEED_SANDBOX).toBe(false);
  });

  it("requires the callback secret outside LOCAL_MODE and names bad variables", () => {
    expect(() => loadRoutingConfig({})).toThrow(new ConfigError("SANDBOX_CALLBACK_SECRET", "is required"));
    // No provider can call back to 127.0.0.1, the local default.
    expect(() => loadRoutingConfig({ SANDBOX_CALLBACK_SECRET: "a-long-random-secret" })).toThrow(new ConfigError("CALLBACK_BASE_URL", "is required"));
    expect(() => loadRoutingConfig({ LOCAL_MODE: "true", PROVIDER_TIMEOUT_MS: "soon" })).toThrow(/PROVIDER_TIMEOUT_MS/);
    expect(() => loadRoutingConfig({ LOCAL_MODE: "true", CALLBACK_BASE_URL: "ftp://x" })).toThrow(/CALLBACK_BASE_URL/);
    expect(loadRoutingConfig({ SANDBOX_CALLBACK_SECRET: "a-long-random-secret", CALLBACK_BASE_URL: "https://routing.example/" }).CALLBACK_BASE_URL).toBe("https://routing.example");
  });
});
