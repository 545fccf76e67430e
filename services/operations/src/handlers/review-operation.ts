import { AppError, fieldError, isUuid } from "@pgw/contracts";
import type { ApplyReviewOutcomeRequest, ResolveManualCheckRequest } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import type { LifecycleEvent } from "../domain/lifecycle";
import { manualCheckAction, reviewAction } from "../domain/status-cause";
import { insertAudit, lockOperation, type OperationRow } from "../store";
import type { Deps } from "./deps";
import { applyTransition, type TransitionFacts } from "./transition-operation";

const REVIEW_OUTCOMES = new Set(["completed", "manual_check", "declined"]);
const MANUAL_CHECK_REASONS = new Set(["potential_fake", "not_terminal"]);
const DECISIONS = new Set(["approve", "decline"]);

/**
 * The receipt review's outcome (from receipts) and the admin's manual-check decision, each a
 * transition of a locked row with an audit record of who decided and why. An approval books the
 * actual_amount the admin gives (the amount that arrived), never the expected one.
 */
export function reviewHandlers(deps: Pick<Deps, "sql" | "peers" | "log">) {
  async function decide(operationId: string, event: LifecycleEvent, facts: TransitionFacts, audit: { action: string; actor: string; reason: string; detail: string }): Promise<OperationRow> {
    if (!isUuid(operationId)) throw new AppError("not_found", "operation not found");
    return deps.sql.$transaction(async (tx) => {
      const current = await lockOperation(tx, null, { operationId });
      if (!current || current.status === "creating") throw new AppError("not_found", "operation not found");
      const result = await applyTransition(tx, current, event, facts, deps.peers, deps.log);
      if ("refused" in result) throw new AppError("invalid_state", `operation in status ${current.status} does not accept this decision`);
      await insertAudit(tx, operationId, audit);
      return result.row;
    });
  }

  return {
    applyReviewOutcome(req: ApplyReviewOutcomeRequest) {
      if (!REVIEW_OUTCOMES.has(req.outcome)) throw new AppError("validation_error", "unknown review outcome", [{ field: "outcome", issue: "must be completed, manual_check or declined" }]);
      const reason = req.manualCheckReason && MANUAL_CHECK_REASONS.has(req.manualCheckReason) ? req.manualCheckReason : undefined;
      return decide(
        req.operationId,
        { kind: "review", outcome: req.outcome as "completed" | "manual_check" | "declined" },
        { actualAmount: req.actualAmount, manualCheckReason: reason },
        { action: reviewAction(req.outcome), actor: "receipts", reason: reason ?? "", detail: "" },
      );
    },
    async resolveManualCheck(req: ResolveManualCheckRequest) {
      if (!DECISIONS.has(req.decision)) throw new AppError("validation_error", "decision must be approve or decline", [{ field: "decision", issue: "must be approve or decline" }]);
      if (!req.actor) throw new AppError("validation_error", "actor is required", [{ field: "actor", issue: "is required" }]);
      if (req.decision === "approve" && !req.actualAmount) throw fieldError("actual_amount", "is required to approve: the amount that arrived");
      const decision = req.decision as "approve" | "decline";
      return decide(
        req.operationId,
        { kind: "manual_resolution", decision },
        { actualAmount: req.actualAmount },
        { action: manualCheckAction(decision), actor: req.actor, reason: req.reason, detail: req.actualAmount ? `actual_amount=${req.actualAmount}` : "" },
      );
    },
  };
}
