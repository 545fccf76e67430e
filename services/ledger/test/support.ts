/**
 * The real ledger unit against the run's Postgres and NATS, a Connect client of it, and helpers
 * that publish status events the way operations does and wait until the ledger has handled them.
 */
import { createClient } from "@connectrpc/connect";
import { toBinary } from "@bufbuild/protobuf";
import { connectNats, scopedDurable, scopedSubject, setNamespace, STREAM_NAME } from "@pgw/kit/events";
import { createPeerTransport, fromConnectError } from "@pgw/kit/rpc";
import { sql } from "kysely";
import { randomBytes } from "node:crypto";
import { OperationStatusChangedSchema } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { statusChangedSubject } from "@pgw/proto/subjects";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { dropDatabases, natsUrl, uniqueDatabaseUrl } from "../../../test/support/infra";
import { planStatusChange } from "../src/domain/status-event";
import { snapshotOf, STATUS_DURABLE } from "../src/events";
import { startLedger } from "../src/main";
import type { StatusEvent } from "./fixtures";

const silent = { debug() {}, info() {}, warn() {}, error() {} };

export type TestLedger = Awaited<ReturnType<typeof startTestLedger>>;

/** A ledger on a fresh database in its own NATS namespace; stop() removes both. */
export async function startTestLedger() {
  const url = uniqueDatabaseUrl("ledger");
  const namespace = `t${randomBytes(5).toString("hex")}`;
  const unit = await startLedger({ DATABASE_URL: url, NATS_URL: natsUrl(), NATS_NAMESPACE: namespace, GRPC_PORT: "0", HEALTH_PORT: "0", LOG_LEVEL: "silent", LOCAL_MODE: "true" });
  const client = createClient(LedgerService, createPeerTransport(`http://127.0.0.1:${unit.grpcPort}`, { timeoutMs: 30_000 }));
  const nc = await connectNats(natsUrl(), "ledger-test", silent);
  setNamespace(nc, namespace);
  const durable = scopedDurable(nc, STATUS_DURABLE);
  const js = nc.jetstream();

  /** Publishes an event to JetStream with Nats-Msg-Id `msgId` (the event id unless told). */
  async function publish(ev: StatusEvent, msgId: string = ev.eventId): Promise<void> {
    await js.publish(scopedSubject(nc, statusChangedSubject(ev.message.status)), toBinary(OperationStatusChangedSchema, ev.message), { msgID: msgId });
  }

  /**
   * Publishes an event and waits until the ledger has committed its handling; an event the ledger
   * ignores (no money moves) is acknowledged without a trace, so there is nothing to wait for.
   */
  async function deliver(ev: StatusEvent, msgId: string = ev.eventId): Promise<void> {
    await publish(ev, msgId);
    if (planStatusChange(snapshotOf(ev.message)).kind !== "none") await waitProcessed(msgId);
  }

  async function waitProcessed(msgId: string, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const row = await unit.db.selectFrom("processedEvents").select("eventId").where("consumer", "=", durable).where("eventId", "=", msgId).executeTakeFirst();
      if (row) return;
      if (Date.now() > deadline) throw new Error(`event ${msgId} not processed within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  return {
    unit,
    client,
    db: unit.db,
    durable,
    publish,
    deliver,
    waitProcessed,
    async stop() {
      await unit.stop();
      const jsm = await nc.jetstreamManager();
      await jsm.consumers.delete(STREAM_NAME, durable).catch(() => undefined);
      await nc.close();
      await dropDatabases([url]);
    },
  };
}

/**
 * Whole-ledger invariants, read straight from the tables in SQL of their own (not the store's
 * Reconcile statements they check): entries that do not sum to zero per currency, balances that
 * drift from their postings, running balances that are not the running sums, negative reserves,
 * and currencies whose accounts do not sum to zero.
 */
export async function journalViolations(db: TestLedger["db"]) {
  const rows = async (query: ReturnType<typeof sql>) => (await query.execute(db)).rows;
  return {
    unbalanced: await rows(sql`SELECT "entry_id", "currency", sum("amount")::text FROM "postings" GROUP BY 1, 2 HAVING sum("amount") <> 0`),
    drifted: await rows(
      sql`SELECT a."id", a."balance"::text, COALESCE(sum(p."amount"), 0)::text AS journal FROM "accounts" a
          LEFT JOIN "postings" p ON p."account_id" = a."id" GROUP BY a."id" HAVING a."balance" <> COALESCE(sum(p."amount"), 0)`,
    ),
    brokenChains: await rows(
      sql`SELECT "id" FROM (SELECT "id", "balance_after", sum("amount") OVER (PARTITION BY "account_id" ORDER BY "id") AS running FROM "postings") r
          WHERE "balance_after" <> running`,
    ),
    negativeReserves: await rows(sql`SELECT "id" FROM "accounts" WHERE "kind" = 'reserved' AND "balance" < 0`),
    currencyTotals: await rows(sql`SELECT "currency", sum("balance")::text FROM "accounts" GROUP BY 1 HAVING sum("balance") <> 0`),
  };
}

export const NO_VIOLATIONS = { unbalanced: [], drifted: [], brokenChains: [], negativeReserves: [], currencyTotals: [] };

/**
 * Starts a ledger before the file's tests and stops it after them. The object returned is filled
 * in by beforeAll, so tests and helpers can hold it from the start.
 */
export function useTestLedger(): TestLedger {
  const ledger = {} as TestLedger;
  beforeAll(async () => {
    Object.assign(ledger, await startTestLedger());
  }, 60_000);
  afterAll(() => ledger.stop?.());
  return ledger;
}

/** The public error code a call failed with, or `ok` of its answer ("resolved" unless told). */
export function outcomeOf<T>(call: Promise<T>, ok: (answer: T) => string = () => "resolved"): Promise<string> {
  return call.then(ok, (err) => fromConnectError(err).code);
}

/** The shop's GetBalances answer as { RUB: {balance, currentMinus, reserved}, USDT: … }. */
export async function balancesOf(ledger: TestLedger, shopId: string) {
  const { balances } = await ledger.client.getBalances({ shopId });
  return Object.fromEntries(balances.map((b) => [b.currency, { balance: b.balance, currentMinus: b.currentMinus, reserved: b.reserved }]));
}
