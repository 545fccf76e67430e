/**
 * Late funds: money a provider reported for an operation that had already ended without it (see
 * apply-provider-update). The admin lists them and records, once, what was done with the money.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { AppError, fieldError, formatAmount, isUuid, requireUuid, type Currency } from "@pgw/contracts";
import type { LateFundsSchema, OperationsService } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { listLateFunds, resolveLateFunds, type LateFundsRow } from "../store";
import type { Deps } from "./deps";

const STATES = ["open", "resolved"] as const;
const MAX_NOTE_LENGTH = 2048;

function lateFundsWire(row: LateFundsRow): MessageInitShape<typeof LateFundsSchema> {
  return {
    id: row.id,
    operationId: row.operationId,
    shopId: row.shopId,
    operationType: row.operationType,
    operationStatus: row.operationStatus,
    amount: formatAmount(row.amount, row.currency as Currency),
    currency: row.currency,
    reportedAt: row.reportedAt.toISOString(),
    resolvedAt: row.resolvedAt?.toISOString(),
    resolvedBy: row.resolvedBy ?? undefined,
    note: row.note ?? undefined,
  };
}

export function lateFundsHandlers({ sql }: Pick<Deps, "sql">): Pick<ServiceImpl<typeof OperationsService>, "listLateFunds" | "resolveLateFunds"> {
  return {
    async listLateFunds(req) {
      if (req.state !== undefined && !(STATES as readonly string[]).includes(req.state)) throw fieldError("state", "must be open or resolved");
      const rows = await listLateFunds(sql, {
        shopId: req.shopId ? requireUuid(req.shopId, "shop_id") : undefined,
        resolved: req.state === undefined ? undefined : req.state === "resolved",
        limit: Math.min(Math.max(req.limit || 50, 1), 500),
      });
      return { lateFunds: rows.map(lateFundsWire) };
    },

    async resolveLateFunds(req) {
      if (!isUuid(req.id)) throw new AppError("not_found", "late funds not found");
      const note = req.note.trim();
      if (!note) throw fieldError("note", "is required: say what was done with the money");
      if (note.length > MAX_NOTE_LENGTH) throw fieldError("note", `must be at most ${MAX_NOTE_LENGTH} characters`);
      const row = await resolveLateFunds(sql, req.id.toLowerCase(), { resolvedBy: req.actor.trim() || "admin", note });
      if (row === "missing") throw new AppError("not_found", "late funds not found");
      if (row === "resolved") throw new AppError("invalid_state", "late funds already resolved");
      return { lateFunds: lateFundsWire(row) };
    },
  };
}
