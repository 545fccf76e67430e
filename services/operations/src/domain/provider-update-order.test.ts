import { EARLIER_UPDATE_WAIT_MS, providerUpdateTurn } from "./provider-update-order";

describe("the turn of a provider update", () => {
  it.each([
    ["the first update of an operation", 1, 0, 0, "apply"],
    ["the next one after those applied", 3, 2, 0, "apply"],
    ["one not numbered (an older routing)", 0, 5, 0, "apply"],
    ["one whose predecessor has not been applied", 3, 1, 0, "wait"],
    ["one that has waited just under the limit", 2, 0, EARLIER_UPDATE_WAIT_MS - 1, "wait"],
    ["one that has waited the limit", 2, 0, EARLIER_UPDATE_WAIT_MS, "apply_past_gap"],
    ["one passed over by a later one, arriving after all", 2, 3, 0, "apply_late"],
  ])("%s", (_name, sequence, applied, waitedMs, turn) => {
    expect(providerUpdateTurn(sequence, applied, waitedMs)).toBe(turn);
  });
});
