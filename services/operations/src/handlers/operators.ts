import type { ServiceImpl } from "@connectrpc/connect";
import { AppError, constantTimeEqual, fieldError, requireUuid, sha256Hex } from "@pgw/kit";
import type { AccountsService } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import { randomUUID } from "node:crypto";
import { generateOperatorToken, operatorNameIssue } from "../domain/operator-token";
import type { Db, OperatorRow } from "../store";

const operatorWire = (o: OperatorRow) => ({
  id: o.id,
  name: o.name,
  createdBy: o.createdBy,
  createdAt: o.createdAt.toISOString(),
  revokedAt: o.revokedAt?.toISOString(),
});

/** Prisma's code for a row a unique index already holds. */
const isUniqueViolation = (err: unknown) => (err as { code?: unknown } | null)?.code === "P2002";

/**
 * The admin API's operators: each has a token of its own (256 random bits, shown once, stored as
 * its SHA-256), which the gateway resolves to the operator on every admin call. Names are unique
 * among active operators, since the name is the actor recorded on decisions.
 */
export function operatorsHandlers({ db }: { db: Db }): Partial<ServiceImpl<typeof AccountsService>> {
  /** Changes an active operator (404 when unknown or revoked) and answers it as changed. */
  const changeActive = async (operatorId: string, data: { tokenHash: string } | { revokedAt: Date }) => {
    const id = requireUuid(operatorId, "operator_id");
    const { count } = await db.operator.updateMany({ where: { id, revokedAt: null }, data });
    if (count === 0) throw new AppError("not_found", "operator not found");
    return operatorWire(await db.operator.findUniqueOrThrow({ where: { id } }));
  };

  return {
    async createOperator(req) {
      const name = req.name.trim();
      const issue = operatorNameIssue(name);
      if (issue) throw fieldError("name", issue);
      const token = generateOperatorToken();
      try {
        const operator = await db.operator.create({ data: { id: randomUUID(), name, tokenHash: sha256Hex(token), createdBy: req.createdBy || "admin" } });
        return { operator: operatorWire(operator), token };
      } catch (err) {
        if (isUniqueViolation(err)) throw fieldError("name", "is taken by an active operator");
        throw err;
      }
    },

    async listOperators() {
      const operators = await db.operator.findMany({ orderBy: { createdAt: "asc" } });
      return { operators: operators.map(operatorWire) };
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
      const operator = /^[0-9a-f]{64}$/.test(req.tokenHash) ? await db.operator.findUnique({ where: { tokenHash: req.tokenHash } }) : null;
      if (!operator || operator.revokedAt || !constantTimeEqual(operator.tokenHash, req.tokenHash)) throw new AppError("not_found", "invalid operator token");
      return { operator: operatorWire(operator) };
    },
  };
}
