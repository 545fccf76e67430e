CREATE TABLE "accounts" (
  "id" UUID NOT NULL PRIMARY KEY,
  "shop_id" UUID NOT NULL,
  "kind" TEXT NOT NULL,
  "currency" TEXT NOT NULL,
  "balance" DECIMAL(38,6) NOT NULL DEFAULT 0,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "accounts_shop_id_kind_currency_key" ON "accounts"("shop_id", "kind", "currency");

CREATE TABLE "journal_entries" (
  "id" UUID NOT NULL PRIMARY KEY,
  "source" TEXT NOT NULL,
  "kind" TEXT NOT NULL,
  "shop_id" UUID NOT NULL,
  "reason" TEXT NOT NULL DEFAULT '',
  "actor" TEXT NOT NULL DEFAULT '',
  "fingerprint" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "journal_entries_source_key" ON "journal_entries"("source");
CREATE INDEX "journal_entries_shop_id_idx" ON "journal_entries"("shop_id");

CREATE TABLE "postings" (
  "id" BIGSERIAL NOT NULL PRIMARY KEY,
  "entry_id" UUID NOT NULL REFERENCES "journal_entries"("id"),
  "account_id" UUID NOT NULL REFERENCES "accounts"("id"),
  "currency" TEXT NOT NULL,
  "amount" DECIMAL(38,6) NOT NULL,
  "balance_after" DECIMAL(38,6) NOT NULL
);
CREATE INDEX "postings_entry_id_idx" ON "postings"("entry_id");
CREATE INDEX "postings_account_id_id_idx" ON "postings"("account_id", "id");

CREATE TABLE "tariffs" (
  "id" UUID NOT NULL PRIMARY KEY,
  "shop_id" UUID,
  "type" TEXT NOT NULL,
  "method" TEXT NOT NULL,
  "currency" TEXT NOT NULL,
  "percent" DECIMAL(10,4) NOT NULL DEFAULT 0,
  "fixed" DECIMAL(30,6) NOT NULL DEFAULT 0,
  "minimum" DECIMAL(30,6) NOT NULL DEFAULT 0,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
-- NULLS NOT DISTINCT: one default (shop_id NULL) tariff per (type, method, currency).
CREATE UNIQUE INDEX "tariffs_shop_id_type_method_currency_key" ON "tariffs"("shop_id", "type", "method", "currency") NULLS NOT DISTINCT;

-- Default tariffs (services/ledger/README.md): payments 2.5 %, payouts 1.5 %, no fixed part, no minimum.
INSERT INTO "tariffs" ("id", "shop_id", "type", "method", "currency", "percent", "fixed", "minimum") VALUES
  ('00000000-0000-4000-8000-000000000001', NULL, 'payment', 'WT_RUB_C2C',   'RUB',  2.5, 0, 0),
  ('00000000-0000-4000-8000-000000000002', NULL, 'payment', 'WT_RUB_PHONE', 'RUB',  2.5, 0, 0),
  ('00000000-0000-4000-8000-000000000003', NULL, 'payment', 'WT_RUB_C2C',   'USDT', 2.5, 0, 0),
  ('00000000-0000-4000-8000-000000000004', NULL, 'payment', 'WT_RUB_PHONE', 'USDT', 2.5, 0, 0),
  ('00000000-0000-4000-8000-000000000005', NULL, 'payout',  'WT_RUB_C2C',   'RUB',  1.5, 0, 0),
  ('00000000-0000-4000-8000-000000000006', NULL, 'payout',  'WT_RUB_PHONE', 'RUB',  1.5, 0, 0),
  ('00000000-0000-4000-8000-000000000007', NULL, 'payout',  'WT_RUB_C2C',   'USDT', 1.5, 0, 0),
  ('00000000-0000-4000-8000-000000000008', NULL, 'payout',  'WT_RUB_PHONE', 'USDT', 1.5, 0, 0);

CREATE TABLE "reserves" (
  "operation_id" UUID NOT NULL PRIMARY KEY,
  "shop_id" UUID NOT NULL,
  "currency" TEXT NOT NULL,
  "amount" DECIMAL(38,6) NOT NULL,
  "commission" DECIMAL(38,6) NOT NULL,
  "status" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "reserves_shop_id_idx" ON "reserves"("shop_id");

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
