CREATE TABLE "merchants" (
  "id" UUID NOT NULL PRIMARY KEY,
  "name" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE "shops" (
  "id" UUID NOT NULL PRIMARY KEY,
  "merchant_id" UUID NOT NULL REFERENCES "merchants"("id"),
  "name" TEXT NOT NULL,
  "webhook_url" TEXT,
  "checkout_enabled" BOOLEAN NOT NULL DEFAULT false,
  "settlement_currency" TEXT NOT NULL DEFAULT 'RUB',
  "overdraft_limit" DECIMAL(30,6) NOT NULL DEFAULT 0,
  "rate_limit_rps" INTEGER NOT NULL DEFAULT 100,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "shops_merchant_id_idx" ON "shops"("merchant_id");

CREATE TABLE "api_keys" (
  "id" UUID NOT NULL PRIMARY KEY,
  "shop_id" UUID NOT NULL REFERENCES "shops"("id"),
  "label" TEXT NOT NULL DEFAULT '',
  "prefix" TEXT NOT NULL,
  "key_hash" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "revoked_at" TIMESTAMPTZ(3)
);
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys"("key_hash");
CREATE INDEX "api_keys_shop_id_idx" ON "api_keys"("shop_id");

CREATE TABLE "operations" (
  "id" UUID NOT NULL PRIMARY KEY,
  "shop_id" UUID NOT NULL,
  "merchant_id" UUID NOT NULL,
  "merchant_operation_id" TEXT NOT NULL,
  "request_hash" TEXT NOT NULL,
  "type" TEXT NOT NULL,
  "status" TEXT NOT NULL,
  "method" TEXT NOT NULL,
  "currency" TEXT NOT NULL,
  "expected_amount" DECIMAL(20,2) NOT NULL,
  "actual_amount" DECIMAL(20,2) NOT NULL DEFAULT 0,
  "client_id" TEXT NOT NULL,
  "client_ip" TEXT,
  "dest_number" TEXT,
  "dest_name" TEXT,
  "dest_bankname" TEXT,
  "number" TEXT,
  "holder_name" TEXT,
  "bankname" TEXT,
  "requires_receipt" BOOLEAN NOT NULL DEFAULT false,
  "fx_source" TEXT,
  "fx_rate" DECIMAL(30,10),
  "settlement_currency" TEXT,
  "settlement_amount" DECIMAL(30,6),
  "commission_amount" DECIMAL(30,6),
  "recorded_currency" TEXT,
  "recorded_amount" DECIMAL(30,6),
  "expires_at" TIMESTAMPTZ(3),
  "manual_check_reason" TEXT,
  "allocation_id" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "operations_shop_id_merchant_operation_id_key" ON "operations"("shop_id", "merchant_operation_id");
CREATE INDEX "operations_status_idx" ON "operations"("status");

CREATE TABLE "cancellations" (
  "id" UUID NOT NULL PRIMARY KEY,
  "operation_id" UUID NOT NULL REFERENCES "operations"("id"),
  "reason" TEXT NOT NULL,
  "outcome" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "cancellations_operation_id_idx" ON "cancellations"("operation_id");

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
