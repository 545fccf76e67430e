/** Every test of the workspace: kit pieces, services' domain rules, system tests through the gateway. */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/services", "<rootDir>/gateway", "<rootDir>/proto", "<rootDir>/deploy", "<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: { "^.+\\.ts$": ["@swc/jest", { jsc: { target: "es2022" }, module: { type: "commonjs" } }] },
  globalSetup: "<rootDir>/test/global-setup.ts",
  globalTeardown: "<rootDir>/test/global-teardown.ts",
  testTimeout: 60000,
  maxWorkers: 2,
};
