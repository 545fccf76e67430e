CREATE TABLE "sandbox_operations" (
  "reference" TEXT NOT NULL PRIMARY KEY,
  "operation_id" UUID NOT NULL,
  "kind" TEXT NOT NULL,
  "method" TEXT NOT NULL,
  "amount" DECIMAL(20,2) NOT NULL,
  "currency" TEXT NOT NULL,
  "status" TEXT NOT NULL,
  "paid_amount" DECIMAL(20,2),
  "requisites" TEXT NOT NULL DEFAULT '{}',
  "requires_receipt" BOOLEAN NOT NULL DEFAULT false,
  "callback_url" TEXT NOT NULL,
  "evidence" TEXT NOT NULL DEFAULT 'complete',
  "expires_at" TIMESTAMPTZ(3),
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "sandbox_operations_operation_id_key" ON "sandbox_operations"("operation_id");
CREATE INDEX "sandbox_operations_status_expires_at_idx" ON "sandbox_operations"("status", "expires_at");

CREATE TABLE "sandbox_legs" (
  "id" UUID NOT NULL PRIMARY KEY,
  "reference" TEXT NOT NULL REFERENCES "sandbox_operations"("reference"),
  "position" INTEGER NOT NULL,
  "amount" DECIMAL(20,2) NOT NULL,
  "legacy" BOOLEAN NOT NULL DEFAULT false,
  "completed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "sandbox_legs_reference_position_key" ON "sandbox_legs"("reference", "position");

CREATE TABLE "sandbox_evidence_items" (
  "id" UUID NOT NULL PRIMARY KEY,
  "leg_id" UUID NOT NULL REFERENCES "sandbox_legs"("id"),
  "position" INTEGER NOT NULL,
  "amount" DECIMAL(20,2) NOT NULL,
  "completed_at" TIMESTAMPTZ(3) NOT NULL,
  "receipt" BYTEA
);
CREATE UNIQUE INDEX "sandbox_evidence_items_leg_id_position_key" ON "sandbox_evidence_items"("leg_id", "position");

CREATE TABLE "sandbox_scenarios" (
  "method" TEXT NOT NULL PRIMARY KEY,
  "accept" TEXT NOT NULL DEFAULT 'accept',
  "accept_delay_ms" INTEGER NOT NULL DEFAULT 0,
  "requires_receipt" BOOLEAN NOT NULL DEFAULT false,
  "evidence" TEXT NOT NULL DEFAULT 'complete',
  "expires_in_s" INTEGER,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
