-- Every status change of an operation, written by the database itself in the statement that makes
-- it, so no path (a create's compare-and-set, a transition, a cancel, psql) can change a status
-- without a record. The admin timeline reads it; what caused each change follows from the pair of
-- statuses (services/operations/src/domain/status-cause.ts).
CREATE TABLE "status_changes" (
  "id" BIGSERIAL NOT NULL PRIMARY KEY,
  "operation_id" UUID NOT NULL,
  "from_status" TEXT NOT NULL,
  "to_status" TEXT NOT NULL,
  "changed_at" TIMESTAMPTZ(3) NOT NULL
);
CREATE INDEX "status_changes_operation_id_idx" ON "status_changes"("operation_id");

CREATE FUNCTION "record_status_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "status_changes" ("operation_id", "from_status", "to_status", "changed_at")
  VALUES (NEW."id", OLD."status", NEW."status", NEW."updated_at");
  RETURN NULL;
END
$$;

CREATE TRIGGER "operation_status_changed" AFTER UPDATE OF "status" ON "operations"
  FOR EACH ROW WHEN (OLD."status" IS DISTINCT FROM NEW."status") EXECUTE FUNCTION "record_status_change"();

-- The admin search finds an operation by its merchant_operation_id in any shop.
CREATE INDEX "operations_merchant_operation_key_idx" ON "operations"("merchant_operation_key");
-- Admin listings run newest first, across shops or within one.
CREATE INDEX "operations_created_at_id_idx" ON "operations"("created_at", "id");
CREATE INDEX "operations_shop_id_created_at_idx" ON "operations"("shop_id", "created_at");
CREATE INDEX "merchants_created_at_idx" ON "merchants"("created_at");
CREATE INDEX "shops_created_at_idx" ON "shops"("created_at");
