CREATE TABLE "stored_files" (
  "id" UUID NOT NULL PRIMARY KEY,
  "content_type" TEXT NOT NULL,
  "size" INTEGER NOT NULL,
  "sha256" TEXT NOT NULL,
  "content" BYTEA NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE "confirmations" (
  "id" UUID NOT NULL PRIMARY KEY,
  "operation_id" UUID NOT NULL,
  "shop_id" UUID NOT NULL,
  "confirmation_type" TEXT NOT NULL,
  "file_id" UUID NOT NULL,
  "filename" TEXT NOT NULL,
  "content_type" TEXT NOT NULL,
  "declared_type" TEXT NOT NULL,
  "outcome" TEXT,
  "manual_check_reason" TEXT,
  "findings" TEXT NOT NULL DEFAULT '[]',
  "applied_at" TIMESTAMPTZ(3),
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "confirmations_operation_id_idx" ON "confirmations"("operation_id");

CREATE TABLE "evidence_items" (
  "id" UUID NOT NULL PRIMARY KEY,
  "operation_id" UUID NOT NULL,
  "leg_id" TEXT NOT NULL,
  "amount" DECIMAL(38,18) NOT NULL,
  "completed_at" TIMESTAMPTZ(3) NOT NULL,
  "legacy" BOOLEAN NOT NULL DEFAULT false,
  "has_file" BOOLEAN NOT NULL DEFAULT false,
  "file_id" UUID,
  "provider_item_id" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "evidence_items_operation_id_idx" ON "evidence_items"("operation_id");

CREATE TABLE "evidence_states" (
  "operation_id" UUID NOT NULL PRIMARY KEY,
  "status" TEXT NOT NULL,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);

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
