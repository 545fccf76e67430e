import type { ServiceImpl } from "@connectrpc/connect";
import { AppError, constantTimeEqual, fieldError, requireUuid, sha256Hex } from "@pgw/contracts";
import type { AccountsService } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import { generateOperatorToken, operatorNameIssue } from "../domain/operator-token";
import { changeActiveOperator, findOperatorByTokenHash, insertOperator, listOperators, type OperatorRow } from "../store";
import type { Deps } from "./deps";

const operatorWire = (o: OperatorRow) => ({
  id: o.id,
  name: o.name,
  createdBy: o.createdBy,
  createdAt: o.createdAt.toISOString(),
  revokedAt: o.revokedAt?.toISOString(),
});

/**
 * The admin API's operators: each has a token of its own (256 random bits, shown once, stored as
 * its SHA-256), which the gateway resolves to the operator on every admin call. Names are unique
 * among active operators, since the name is the actor recorded on decisions.
 */
export function operatorsHandlers({ db }: Pick<Deps, "db">): Partial<ServiceImpl<typeof AccountsService>> {
  /** Changes an active operator (404 when unknown or revoked) and answers it as changed. */
  const changeActive = async (operatorId: string, data: { tokenHash: string } | { revokedAt: Date }) => {
    const operator = await changeActiveOperator(db, requireUuid(operatorId, "operator_id"), data);
    if (!operator) throw new AppError("not_found", "operator not found");
    return operatorWire(operator);
  };

  return {
    async createOperator(req) {
      const name = req.name.trim();
      const issue = operatorNameIssue(name);
      if (issue) throw fieldError("name", issue);
      const token = generateOperatorToken();
      const operator = await insertOperator(db, { name, tokenHash: sha256Hex(token), createdBy: req.createdBy || "admin" });
      if (!operator) throw fieldError("name", "is taken by an active operator");
      return { operator: operatorWire(operator), token };
    },

    async listOperators() {
      return { operators: (await listOperators(db)).map(operatorWire) };
    },

    async rotateOperatorToken(req) {
      const token = generateOperatorToken();
      return { operator: await changeActive(req.operatorId, { tokenHash: sha256Hex(token) }), token };
    },

    async revokeOperator(req) {
      // Only the first revocation sets the time; a second finds no active operator (404).
      return { operator: await changeActive(req.operatorId, { revokedAt: new Date() }) };
    },

    async resolveOperator(req) {
      const operator = /^[0-9a-f]{64}$/.test(req.tokenHash) ? await findOperatorByTokenHash(db, req.tokenHash) : null;
      if (!operator || operator.revokedAt || !constantTimeEqual(operator.tokenHash, req.tokenHash)) throw new AppError("not_found", "invalid operator token");
      return { operator: operatorWire(operator) };
    },
  };
}
