import { randomUUID } from "node:crypto";
import { codeOf, startHarness, type Harness } from "./harness";

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});
beforeEach(async () => {
  await h.resetScenarios();
});

describe("CheckFunds", () => {
  it("passes the provider's answer through: not arrived, then arrived with the amount", async () => {
    const operationId = await h.allocated();
    expect((await h.client.checkFunds({ operationId })).state).not.toBe("arrived");
    await h.control(h.sandboxA, "POST", `/control/operations/${operationId}/pay`, { amount: "99.90" });
    expect(await h.client.checkFunds({ operationId })).toEqual(expect.objectContaining({ state: "arrived", amount: "99.90" }));
  });

  it("answers not_found without an allocation (none, or a tombstone)", async () => {
    expect(await codeOf(h.client.checkFunds({ operationId: randomUUID() }))).toBe("not_found");
    const operationId = randomUUID();
    await h.client.release({ operationId, reason: "cancel" });
    expect(await codeOf(h.client.checkFunds({ operationId }))).toBe("not_found");
  });
});

describe("GetEvidence and GetEvidenceFile", () => {
  it("passes the legs and their receipt files through", async () => {
    const operationId = await h.allocated({ type: "payout", destination: { number: "4111111111111111", name: "A B" } });
    await h.control(h.sandboxA, "POST", `/control/operations/${operationId}/settle`, { legs: ["60.00", "40.00"] });
    const { legs } = await h.client.getEvidence({ operationId });
    expect(legs.map((l) => l.amount)).toEqual(["60.00", "40.00"]);
    const item = legs[0].items[0];
    expect(item).toEqual(expect.objectContaining({ amount: "60.00", hasFile: true }));
    const file = await h.client.getEvidenceFile({ operationId, itemId: item.id });
    expect(file.contentType).toBe("application/pdf");
    expect(Buffer.from(file.content).subarray(0, 5).toString()).toBe("%PDF-");
  });

  it("does not hand out an item of another operation's evidence", async () => {
    const a = await h.allocated();
    const b = await h.allocated();
    await h.control(h.sandboxA, "POST", `/control/operations/${a}/pay`, { amount: "100.00" });
    await h.control(h.sandboxA, "POST", `/control/operations/${b}/pay`, { amount: "100.00" });
    const itemOfB = (await h.client.getEvidence({ operationId: b })).legs[0].items[0].id;
    expect(await codeOf(h.client.getEvidenceFile({ operationId: a, itemId: itemOfB }))).toBe("not_found");
    expect((await h.client.getEvidenceFile({ operationId: b, itemId: itemOfB })).content.length).toBeGreaterThan(100);
  });

  it("answers unavailable while the provider cannot give evidence", async () => {
    const operationId = await h.allocated();
    await h.control(h.sandboxA, "POST", `/control/operations/${operationId}/pay`, { amount: "100.00" });
    await h.control(h.sandboxA, "PUT", "/control/scenario", { method: "WT_RUB_C2C", accept: "accept", evidence: "unavailable" });
    expect(await codeOf(h.client.getEvidence({ operationId }))).toBe("unavailable");
    await h.resetScenarios();
    expect((await h.client.getEvidence({ operationId })).legs).toHaveLength(1);
  });

  it("answers unavailable when the provider is down, not_found without an allocation", async () => {
    const operationId = await h.allocated();
    await h.routing.db.provider.update({ where: { code: "sandbox" }, data: { baseUrl: "http://127.0.0.1:9" } });
    try {
      expect(await codeOf(h.client.getEvidence({ operationId }))).toBe("unavailable");
      expect(await codeOf(h.client.checkFunds({ operationId }))).toBe("unavailable");
    } finally {
      await h.routing.db.provider.update({ where: { code: "sandbox" }, data: { baseUrl: `http://127.0.0.1:${h.sandboxA.port}` } });
    }
    expect(await codeOf(h.client.getEvidence({ operationId: randomUUID() }))).toBe("not_found");
  });
});
