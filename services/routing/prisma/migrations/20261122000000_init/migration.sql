CREATE TABLE "providers" (
  "id" UUID NOT NULL PRIMARY KEY,
  "code" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "connector" TEXT NOT NULL DEFAULT 'sandbox',
  "base_url" TEXT NOT NULL,
  "callback_secret" TEXT NOT NULL,
  "timeout_ms" INTEGER NOT NULL DEFAULT 5000,
  "enabled" BOOLEAN NOT NULL DEFAULT true,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "providers_code_key" ON "providers"("code");

CREATE TABLE "routes" (
  "id" UUID NOT NULL PRIMARY KEY,
  "provider_id" UUID NOT NULL REFERENCES "providers"("id"),
  "type" TEXT NOT NULL,
  "method" TEXT NOT NULL,
  "currency" TEXT NOT NULL,
  "settlement_currency" TEXT NOT NULL,
  "priority" INTEGER NOT NULL DEFAULT 100,
  "min_amount" DECIMAL(20,2) NOT NULL DEFAULT 0,
  "max_amount" DECIMAL(20,2) NOT NULL,
  "requires_receipt" BOOLEAN NOT NULL DEFAULT false,
  "auto_conversion" BOOLEAN NOT NULL DEFAULT false,
  "enabled" BOOLEAN NOT NULL DEFAULT true,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "routes_type_method_currency_settlement_currency_idx" ON "routes"("type", "method", "currency", "settlement_currency");

CREATE TABLE "allocations" (
  "id" UUID NOT NULL PRIMARY KEY,
  "operation_id" UUID NOT NULL,
  "provider_id" UUID REFERENCES "providers"("id"),
  "route_id" UUID,
  "provider_reference" TEXT,
  "status" TEXT NOT NULL,
  "type" TEXT,
  "method" TEXT,
  "amount" DECIMAL(20,2),
  "currency" TEXT,
  "settlement_currency" TEXT,
  "requisites_number" TEXT,
  "requisites_name" TEXT,
  "requisites_bankname" TEXT,
  "requires_receipt" BOOLEAN NOT NULL DEFAULT false,
  "fx_source" TEXT,
  "fx_rate" DECIMAL(30,10),
  "expires_at" TIMESTAMPTZ(3),
  "release_reason" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "allocations_operation_id_key" ON "allocations"("operation_id");
CREATE UNIQUE INDEX "allocations_provider_id_provider_reference_key" ON "allocations"("provider_id", "provider_reference");

CREATE TABLE "fx_rates" (
  "id" UUID NOT NULL PRIMARY KEY,
  "source" TEXT NOT NULL,
  "base_currency" TEXT NOT NULL,
  "quote_currency" TEXT NOT NULL,
  "rate" DECIMAL(30,10) NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "fx_rates_source_base_currency_quote_currency_key" ON "fx_rates"("source", "base_currency", "quote_currency");

CREATE TABLE "provider_callbacks" (
  "id" UUID NOT NULL PRIMARY KEY,
  "provider_id" UUID NOT NULL,
  "callback_id" TEXT NOT NULL,
  "operation_id" UUID NOT NULL,
  "status" TEXT NOT NULL,
  "body" TEXT NOT NULL,
  "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "provider_callbacks_provider_id_callback_id_key" ON "provider_callbacks"("provider_id", "callback_id");

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
