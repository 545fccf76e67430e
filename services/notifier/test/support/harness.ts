/**
 * The real notifier unit on the run's Postgres and NATS, fed by publishing events to JetStream the
 * way operations does. Each harness has its own NATS namespace, so it sees only its own events.
 */
import { createClient, type Client } from "@connectrpc/connect";
import { create, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { ensureStream, scopedDurable, scopedSubject, setNamespace, STREAM_NAME } from "@pgw/kit/events";
import { createPeerTransport } from "@pgw/kit/rpc";
import { OperationStatusChangedSchema, ShopChangedSchema, type ProviderEvidenceSchema } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { statusChangedSubject } from "@pgw/proto/subjects";
import { NotifierService } from "@pgw/proto/gen/pgw/notifier/v1/notifier_pb";
import { OperationSchema, OperationType, type Operation } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { connect, type NatsConnection } from "nats";
import { randomBytes, randomUUID } from "node:crypto";
import { dropDatabases, natsUrl, uniqueDatabaseUrl } from "../../../../test/support/infra";
import { SHOPS_DURABLE, STATUS_CONSUMERS, SUBJECTS } from "../../src/events";
import { startNotifier } from "../../src/main";

export type Notifier = Awaited<ReturnType<typeof startNotifier>>;

export interface Harness {
  unit: Notifier;
  databaseUrl: string;
  client: Client<typeof NotifierService>;
  /** A connection in the harness's namespace (publish with scopedSubject). */
  nc: NatsConnection;
  stopUnit(): Promise<void>;
  /** Starts a unit again on the same database and namespace. */
  startUnit(): Promise<void>;
  stop(): Promise<void>;
}

export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const databaseUrl = uniqueDatabaseUrl("notifier");
  const namespace = `t${randomBytes(5).toString("hex")}`;
  const nc = await connect({ servers: natsUrl() });
  setNamespace(nc, namespace);
  await ensureStream(nc);
  const unitEnv = {
    DATABASE_URL: databaseUrl,
    NATS_URL: natsUrl(),
    NATS_NAMESPACE: namespace,
    GRPC_PORT: "0",
    HEALTH_PORT: "0",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    LOCAL_MODE: "true",
    SHUTDOWN_GRACE_MS: "1000",
    RECEIPTS_URL: "http://127.0.0.1:9", // nothing listens: evidence unavailable unless a test says otherwise
    OPERATIONS_URL: "http://127.0.0.1:9", // nothing listens: an event's number must come with it
    WEBHOOK_POLL_MS: "200",
    ...env,
  };
  let unit: Notifier | undefined = await startNotifier(unitEnv);
  const clientOf = (u: Notifier) => createClient(NotifierService, createPeerTransport(`http://127.0.0.1:${u.grpcPort}`, { timeoutMs: 5000 }));
  const h: Harness = {
    unit,
    databaseUrl,
    client: clientOf(unit),
    nc,
    async stopUnit() {
      await unit?.stop();
      unit = undefined;
    },
    async startUnit() {
      unit = await startNotifier(unitEnv);
      h.unit = unit;
      h.client = clientOf(unit);
    },
    async stop() {
      await unit?.stop();
      const jsm = await nc.jetstreamManager();
      for (const durable of [SHOPS_DURABLE, ...STATUS_CONSUMERS.map((c) => c.durable)]) await jsm.consumers.delete(STREAM_NAME, scopedDurable(nc, durable)).catch(() => undefined);
      await nc.close();
      await dropDatabases([databaseUrl]);
    },
  };
  return h;
}

/** Publishes a shop's webhook URL as operations does on shop create/update. */
export async function publishShopChanged(nc: NatsConnection, shopId: string, webhookUrl: string | undefined, occurredAt = new Date()): Promise<string> {
  const eventId = randomUUID();
  const ev = create(ShopChangedSchema, {
    eventId,
    shopId,
    merchantId: randomUUID(),
    webhookUrl,
    settlementCurrency: "RUB",
    overdraftLimit: "0.000000",
    rateLimitRps: 100,
    occurredAt: occurredAt.toISOString(),
  });
  await nc.jetstream().publish(scopedSubject(nc, SUBJECTS.shopChanged), toBinary(ShopChangedSchema, ev), { msgID: eventId });
  return eventId;
}

/** An operation snapshot as operations puts it in the event (internal fields included). */
export function operation(shopId: string, status: string, over: Partial<Operation> = {}): Operation {
  return create(OperationSchema, {
    operationId: randomUUID(),
    type: OperationType.PAYMENT,
    status,
    method: "WT_RUB_C2C",
    expectedAmount: "1500.00",
    actualAmount: status === "completed" ? "1500.00" : "0.00",
    currency: "RUB",
    settlementAmount: "1455.00",
    settlementCurrency: "RUB",
    commissionAmount: "45.00",
    number: "2200700012345678",
    name: "IVAN IVANOV",
    bankname: "sberbank",
    banknameDetails: "Sberbank",
    merchantOperationId: `m-${randomUUID()}`,
    shopId,
    createdAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
    ...over,
  });
}

/**
 * Publishes a status change as operations does (`sealedNumber` beside the snapshot; `op.number` in
 * clear as an event of an earlier version has it); resolves to the event id.
 */
export async function publishStatus(
  nc: NatsConnection,
  op: Operation,
  previousStatus: string,
  opts: { eventId?: string; occurredAt?: string; sealedNumber?: string; providerEvidence?: MessageInitShape<typeof ProviderEvidenceSchema> } = {},
): Promise<string> {
  const eventId = opts.eventId ?? randomUUID();
  const ev = create(OperationStatusChangedSchema, {
    eventId,
    operationId: op.operationId,
    shopId: op.shopId,
    merchantId: randomUUID(),
    previousStatus,
    status: op.status,
    operation: op,
    occurredAt: opts.occurredAt ?? new Date().toISOString(),
    sealedNumber: opts.sealedNumber,
    providerEvidence: opts.providerEvidence,
  });
  await nc.jetstream().publish(scopedSubject(nc, statusChangedSubject(ev.status)), toBinary(OperationStatusChangedSchema, ev), { msgID: eventId });
  return eventId;
}

/** Polls `probe` until it returns something truthy; throws after `timeoutMs`. */
export async function waitFor<T>(probe: () => Promise<T> | T, timeoutMs = 10_000, what = "condition"): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

