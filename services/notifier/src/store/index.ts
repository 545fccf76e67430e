/**
 * The notifier's persistence: every statement the unit runs, through Kysely on the unit's one pg
 * pool (typed by src/generated/kysely, from prisma/schema.prisma); the unit opens no Prisma client.
 * - endpoints.ts: each shop's webhook URL and the endpoint lock;
 * - secrets.ts: signing secrets;
 * - deliveries.ts: the delivery queue, attempts, listings and redeliveries;
 * - db.ts: the database's types and the SQL pieces they share.
 * Signing secrets and delivery bodies (which hold card numbers) are stored sealed under the data
 * keys: sealed on the way in, answered as stored, and opened by the worker for each attempt.
 */
import type { SealedColumn } from "@pgw/kit/db";

/** The columns this unit seals (kit data-keys.ts); re-sealed by DATA_RESEAL=only. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: "webhook_secrets", column: "secret" },
  { table: "deliveries", column: "payload" },
];

export { DUE_CHANNEL, type DeliveryStatus, type NotifierDb, type NotifierSql, type NotifierTx } from "./db";
export * from "./deliveries";
export { applyShopWebhookUrl } from "./endpoints";
export { rotateSecret, signingSecrets } from "./secrets";
export { pendingDeliveries } from "./backlog";
