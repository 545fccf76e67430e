/**
 * Creates that died mid-flight (their process was killed while the row was `creating`) hold their
 * key until released: the allocation and a payout's reserve are given back and the row removed.
 * A live create always ends by its deadline (its provider wait stops there, and the undo follows
 * at once), so a row still `creating` `ABANDONED_CREATE_GRACE_MS` after that deadline is dead.
 */
import { runPeriodically, type Logger, type Stoppable } from "@pgw/kit/runtime";
import type { Peers } from "../connectors/peers";
import { abandonedCreates, releaseCreating, type Sql } from "../store";

const ABANDONED_CREATE_GRACE_MS = 10_000;

/** How old a `creating` row must be to count as abandoned, given the service's create deadline. */
export const abandonedAfterMs = (createDeadlineMs: number) => createDeadlineMs + ABANDONED_CREATE_GRACE_MS;

export interface AbandonedCreateDeps {
  sql: Sql;
  log: Logger;
  peers: Peers;
}

/**
 * Releases an abandoned create: routing's allocation, then the ledger's reserve, then the row. True
 * when the key is free; while the ledger cannot confirm the release the row stays (to retry later).
 */
export async function releaseAbandonedCreate(deps: AbandonedCreateDeps, id: string): Promise<boolean> {
  await deps.peers.routing.release({ operationId: id, reason: "abandoned create" }).catch(() => undefined);
  const reserveGone = await deps.peers.ledger.releaseReserve({ operationId: id }).then(
    () => true,
    (err: unknown) => (deps.log.warn({ err, operation_id: id }, "abandoned create: reserve release failed; retrying later"), false),
  );
  if (!reserveGone) return false;
  if (await releaseCreating(deps.sql, id)) deps.log.warn({ operation_id: id }, "abandoned create released");
  return true;
}

/** Releases every abandoned create every 10 s, for keys no retry asks about. */
export function startAbandonedCreatesSweep(deps: AbandonedCreateDeps & { olderThanMs: number }): Stoppable {
  const pass = async () => {
    for (const id of await abandonedCreates(deps.sql, new Date(Date.now() - deps.olderThanMs))) await releaseAbandonedCreate(deps, id);
  };
  return runPeriodically(pass, 10_000, (err) => deps.log.warn({ err }, "sweep of abandoned creates failed"));
}
