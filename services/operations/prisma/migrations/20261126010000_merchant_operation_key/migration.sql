-- merchant_operation_id is any non-empty string (spec), and a btree entry holds at most about 2.7 kB:
-- the key's uniqueness per shop and its lookups go by its sha256 (store.ts operationKeyHash).
ALTER TABLE "operations" ADD COLUMN "merchant_operation_key" BYTEA;
UPDATE "operations" SET "merchant_operation_key" = sha256(convert_to("merchant_operation_id", 'UTF8'));
ALTER TABLE "operations" ALTER COLUMN "merchant_operation_key" SET NOT NULL;
DROP INDEX "operations_shop_id_merchant_operation_id_key";
CREATE UNIQUE INDEX "operations_shop_id_merchant_operation_key_key" ON "operations"("shop_id", "merchant_operation_key");
