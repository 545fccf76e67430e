/**
 * `pnpm chaos`: load on the local stack (the running `pnpm start`, or one started here) while
 * every unit, nats-server and Postgres is killed with SIGKILL in turn (the launcher restarts them);
 * then, once the stack has settled, checks that no operation was lost, duplicated, stuck or booked
 * wrong, and that every completion was reported. Exits 1 on any miss.
 *   CHAOS_DURATION_S (180)  how long the load and the kills run
 *   CHAOS_SETTLE_S (120)    how long to wait afterwards for paid operations to complete
 *   CHAOS_CLIENTS (4), CHAOS_RATE (3)  clients and creates per second each
 */
import fs from "node:fs";
import path from "node:path";
import { startReceiver } from "../services/notifier/test/support/receiver";
import { call, ok, sleep } from "./chaos/http";
import { killInTurn, TARGETS } from "./chaos/kills";
import { runLoad } from "./chaos/load";
import { checkInvariants, unpublishedOutbox } from "./chaos/invariants";
import { benchShop, DATA_DIR, GATEWAY, localStack, SANDBOX } from "./local-stack";

const log = (line: string) => process.stdout.write(`[chaos] ${line}\n`);
const DURATION_MS = Number(process.env.CHAOS_DURATION_S ?? 180) * 1000;
const SETTLE_MS = Number(process.env.CHAOS_SETTLE_S ?? 120) * 1000;
const CLIENTS = Number(process.env.CHAOS_CLIENTS ?? 4);
const RATE = Number(process.env.CHAOS_RATE ?? 3);

/** The Postgres server the units use: DATABASE_URL when the launcher was given one, else the embedded one. */
function databaseServerUrl(): string {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  const port = Number(fs.readFileSync(path.join(DATA_DIR, "postgres", "pgw-port"), "utf8").trim());
  return `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
}

async function main(): Promise<number> {
  const stack = await localStack(log);
  const receiver = await startReceiver();
  try {
    const shop = await benchShop(receiver.url);
    receiver.secrets.push(shop.webhookSecret);
    const completedWebhooks = () => new Set(receiver.successes().filter((w) => w.json?.type === "operation.completed").map((w) => w.json.data.operation_id as string));
    log(`load: ${CLIENTS} clients × ${RATE} creates/s for ${DURATION_MS / 1000} s, killing each unit, nats-server and Postgres in turn (data ${DATA_DIR})`);
    const [stats, killed] = await Promise.all([
      runLoad({ gateway: GATEWAY, sandbox: SANDBOX, apiKey: shop.apiKey, clients: CLIENTS, ratePerClient: RATE, durationMs: DURATION_MS }),
      killInTurn(DATA_DIR, DURATION_MS, log),
    ]);
    log(`load done: ${stats.creates} creates, ${stats.created.length} answered 200, ${stats.deliberateRepeats} repeated on purpose, ${stats.abandoned.length} abandoned, ${stats.refused} refused (4xx); retried failures: ${stats.failures.create} creates, ${stats.failures.control} sandbox calls`);

    // Settle: every paid operation terminal, webhooks in, outboxes drained (or the time is up).
    const databaseUrl = databaseServerUrl();
    const states = new Map<string, any>();
    const settleUntil = Date.now() + SETTLE_MS;
    for (;;) {
      for (const c of stats.created) {
        const id = [...c.operationIds][0];
        if (states.get(id)?.status === "completed") continue;
        const answer = await call(`${GATEWAY}/v1/get_operation_state`, { headers: { "x-api-key": shop.apiKey }, body: { operation_id: id } });
        if (ok(answer)) states.set(id, answer.body);
      }
      const waiting = stats.created.filter((c) => c.paid && states.get([...c.operationIds][0])?.status !== "completed").length;
      const hooks = completedWebhooks();
      const noHook = [...states.values()].filter((s) => s.status === "completed" && !hooks.has(s.operation_id)).length;
      const outbox = await unpublishedOutbox(databaseUrl).catch(() => -1);
      if ((waiting === 0 && noHook === 0 && outbox === 0) || Date.now() > settleUntil) break;
      log(`settling: ${waiting} paid operations not completed, ${noHook} completions without webhook, ${outbox} outbox rows unpublished`);
      await sleep(2_000);
    }

    const results = await checkInvariants({ gateway: GATEWAY, apiKey: shop.apiKey, shopId: shop.shopId, databaseUrl, stats, states, completedWebhooks: completedWebhooks() });
    log(`killed: ${killed.join(", ")}`);
    log(`webhooks: ${receiver.verified.length} verified, ${receiver.rejected} rejected signatures`);
    for (const r of results) log(`${r.misses === 0 ? "ok  " : "MISS"} ${r.name}: ${r.checked} checked, ${r.misses} missed`);
    const failed = results.filter((r) => r.misses > 0).length + (receiver.rejected > 0 ? 1 : 0) + (killed.length < TARGETS.length ? 1 : 0);
    log(failed === 0 ? "all invariants held" : `${failed} invariants failed`);
    return failed === 0 ? 0 : 1;
  } finally {
    await receiver.close();
    await stack.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
