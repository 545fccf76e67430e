/**
 * The chaos load: clients creating payments and payouts at a steady rate, each with its own
 * merchant_operation_id; a create that fails the way a kill makes it fail is retried with the same
 * key, and some that succeeded are sent again on purpose, to test idempotency. Each created
 * operation is then paid (payment) or settled (payout) through the sandbox's control API.
 */
import { randomUUID } from "node:crypto";
import { call, ok, sleep, transient, type Answer } from "./http";

export interface Created {
  moid: string;
  type: "payment" | "payout";
  /** Every operation id a 200 answer for this key carried (one, when idempotency holds). */
  operationIds: Set<string>;
  /** The sandbox took the pay/settle call: the operation must end `completed`. */
  paid: boolean;
}

export interface LoadStats {
  creates: number;
  created: Created[];
  /** Keys whose create never got a 200 within its retries (checked later: nothing half-done). */
  abandoned: string[];
  deliberateRepeats: number;
  /** Failed calls (5xx or no answer) that were retried, by kind. */
  failures: { create: number; control: number };
  /** Creates refused with a 4xx (not retried). */
  refused: number;
}

const RETRIES = 30;

/** Calls `attempt` until it answers without a transient failure (or RETRIES), counting failures. */
async function retried(attempt: () => Promise<Answer>, onFailure: () => void): Promise<Answer> {
  let answer = await attempt();
  for (let i = 1; i < RETRIES && transient(answer); i++) {
    onFailure();
    await sleep(Math.min(250 * i, 2_000));
    answer = await attempt();
  }
  if (transient(answer)) onFailure();
  return answer;
}

export async function runLoad(options: { gateway: string; sandbox: string; apiKey: string; clients: number; ratePerClient: number; durationMs: number }): Promise<LoadStats> {
  const stats: LoadStats = { creates: 0, created: [], abandoned: [], deliberateRepeats: 0, failures: { create: 0, control: 0 }, refused: 0 };
  const until = Date.now() + options.durationMs;
  const headers = { "x-api-key": options.apiKey };

  const one = async (client: number) => {
    const type = Math.random() < 0.25 ? "payout" : "payment";
    const moid = `chaos-${client}-${randomUUID()}`;
    const body = { merchant_operation_id: moid, client_id: `chaos-${client}`, method: "WT_RUB_C2C", currency: "RUB", ...(type === "payment" ? { amount: "100.00" } : { amount: "10.00", number: "4111111111111111" }) };
    const create = () => call(`${options.gateway}/v1/${type}`, { headers, body });
    stats.creates++;
    const answer = await retried(create, () => stats.failures.create++);
    if (!ok(answer)) {
      if (transient(answer)) stats.abandoned.push(moid);
      else stats.refused++;
      return;
    }
    const record: Created = { moid, type, operationIds: new Set([answer.body.operation_id]), paid: false };
    stats.created.push(record);
    if (Math.random() < 0.2) {
      stats.deliberateRepeats++;
      const again = await retried(create, () => stats.failures.create++);
      if (ok(again)) record.operationIds.add(again.body.operation_id);
    }
    const id = answer.body.operation_id as string;
    const control = `${options.sandbox}/control/operations/${id}/${type === "payment" ? "pay" : "settle"}`;
    const paid = await retried(() => call(control, { body: type === "payment" ? { amount: "100.00" } : {} }), () => stats.failures.control++);
    record.paid = ok(paid);
  };

  await Promise.all(
    Array.from({ length: options.clients }, async (_, client) => {
      const interval = 1000 / options.ratePerClient;
      while (Date.now() < until) {
        const started = Date.now();
        await one(client);
        await sleep(Math.max(0, interval - (Date.now() - started)));
      }
    }),
  );
  return stats;
}
