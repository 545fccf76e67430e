-- Money a provider reported for an operation that had already ended without it: the admin queue of
-- money to return (one row per operation; a repeated report adds nothing).
CREATE TABLE "late_funds" (
  "id" UUID NOT NULL PRIMARY KEY,
  "operation_id" UUID NOT NULL REFERENCES "operations"("id"),
  "shop_id" UUID NOT NULL,
  "operation_type" TEXT NOT NULL,
  "operation_status" TEXT NOT NULL,
  "amount" DECIMAL(20,2) NOT NULL,
  "currency" TEXT NOT NULL,
  "reported_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "resolved_at" TIMESTAMPTZ(3),
  "resolved_by" TEXT,
  "note" TEXT
);
CREATE UNIQUE INDEX "late_funds_operation_id_key" ON "late_funds"("operation_id");
CREATE INDEX "late_funds_reported_at_idx" ON "late_funds"("reported_at");
