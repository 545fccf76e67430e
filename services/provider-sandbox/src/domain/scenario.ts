import type { Method } from "./methods";

/** How the sandbox answers a create: at once, with 422, or never in time. */
export const ACCEPT_MODES = ["accept", "reject", "timeout"] as const;
export type AcceptMode = (typeof ACCEPT_MODES)[number];

/**
 * What the evidence endpoint reports for a finished operation: every leg with its receipts; the
 * first leg as a legacy contribution; nothing (503) while the scenario says so; or, `late`, nothing
 * (503) to the first request of an operation paid under it (its evidence not ready yet when the
 * callback goes) and everything to later ones.
 */
export const EVIDENCE_MODES = ["complete", "legacy", "unavailable", "late"] as const;
export type EvidenceMode = (typeof EVIDENCE_MODES)[number];

/** Behaviour of the sandbox for one method (PUT /control/scenario). */
export interface Scenario {
  method: Method;
  accept: AcceptMode;
  /** Delay before an accepted create answers. */
  acceptDelayMs: number;
  /** Whether a pay-in asks the payer for a receipt. */
  requiresReceipt: boolean;
  evidence: EvidenceMode;
  /** Lifetime of pay-in requisites; null: they never expire. */
  expiresInS: number | null;
}

/**
 * With no scenario set: accept at once, no receipt, complete evidence, no expiry
 * (docs/architecture.md, Provider sandbox control API).
 */
export function defaultScenario(method: Method): Scenario {
  return { method, accept: "accept", acceptDelayMs: 0, requiresReceipt: false, evidence: "complete", expiresInS: null };
}

/** When requisites handed out at `now` under `scenario` lapse; null when they do not. */
export function expiryOf(scenario: Scenario, now: Date): Date | null {
  return scenario.expiresInS === null ? null : new Date(now.getTime() + scenario.expiresInS * 1000);
}
