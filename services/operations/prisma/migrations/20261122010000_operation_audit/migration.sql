-- Who changed an operation outside the provider flow, and why (receipt review, manual check).
CREATE TABLE "operation_audit" (
  "id" UUID NOT NULL PRIMARY KEY,
  "operation_id" UUID NOT NULL REFERENCES "operations"("id"),
  "action" TEXT NOT NULL,
  "actor" TEXT NOT NULL,
  "reason" TEXT NOT NULL DEFAULT '',
  "detail" TEXT NOT NULL DEFAULT '',
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "operation_audit_operation_id_idx" ON "operation_audit"("operation_id");
