CREATE TABLE "endpoints" (
  "shop_id" UUID NOT NULL PRIMARY KEY,
  "url" TEXT,
  "disabled" BOOLEAN NOT NULL DEFAULT false,
  "disabled_at" TIMESTAMPTZ(3),
  "settings_at" TIMESTAMPTZ(3) NOT NULL,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE "webhook_secrets" (
  "id" UUID NOT NULL PRIMARY KEY,
  "shop_id" UUID NOT NULL,
  "secret" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "expires_at" TIMESTAMPTZ(3)
);
CREATE INDEX "webhook_secrets_shop_id_idx" ON "webhook_secrets"("shop_id");
-- At most one current (non-expiring) secret per shop; replicas creating one at once converge on it.
CREATE UNIQUE INDEX "webhook_secrets_current_key" ON "webhook_secrets"("shop_id") WHERE "expires_at" IS NULL;

CREATE TABLE "deliveries" (
  "id" UUID NOT NULL PRIMARY KEY,
  "webhook_id" TEXT NOT NULL,
  "shop_id" UUID NOT NULL,
  "operation_id" UUID NOT NULL,
  "event_type" TEXT NOT NULL,
  "payload" TEXT NOT NULL,
  "status" TEXT NOT NULL,
  "attempts" INTEGER NOT NULL DEFAULT 0,
  "round_attempts" INTEGER NOT NULL DEFAULT 0,
  "next_attempt_at" TIMESTAMPTZ(3),
  "claim_id" UUID,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "deliveries_webhook_id_key" ON "deliveries"("webhook_id");
CREATE UNIQUE INDEX "deliveries_operation_id_event_type_key" ON "deliveries"("operation_id", "event_type");
CREATE INDEX "deliveries_status_next_attempt_at_idx" ON "deliveries"("status", "next_attempt_at");
CREATE INDEX "deliveries_shop_id_created_at_idx" ON "deliveries"("shop_id", "created_at");

CREATE TABLE "delivery_attempts" (
  "id" UUID NOT NULL PRIMARY KEY,
  "delivery_id" UUID NOT NULL REFERENCES "deliveries"("id"),
  "number" INTEGER NOT NULL,
  "status_code" INTEGER,
  "latency_ms" INTEGER NOT NULL,
  "response_snippet" TEXT NOT NULL DEFAULT '',
  "error" TEXT NOT NULL DEFAULT '',
  "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "delivery_attempts_delivery_id_idx" ON "delivery_attempts"("delivery_id");

-- Transactional outbox and consumer idempotency (services/kit/sql/outbox.sql).
CREATE TABLE "outbox" (
  "id" UUID NOT NULL PRIMARY KEY,
  "subject" TEXT NOT NULL,
  "payload" BYTEA NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "published_at" TIMESTAMPTZ(3)
);
CREATE INDEX "outbox_unpublished_idx" ON "outbox" ("created_at") WHERE "published_at" IS NULL;

CREATE TABLE "processed_events" (
  "consumer" TEXT NOT NULL,
  "event_id" UUID NOT NULL,
  "processed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY ("consumer", "event_id")
);
