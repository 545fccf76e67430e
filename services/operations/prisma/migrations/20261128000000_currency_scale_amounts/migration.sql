-- Amounts a provider or an admin reports keep their currency's scale (USDT has 6 places), so the
-- columns that hold them take 6 places; the request's expected_amount keeps scale 2.
ALTER TABLE "operations" ALTER COLUMN "actual_amount" TYPE DECIMAL(24,6);
ALTER TABLE "operations" ALTER COLUMN "provider_reported_amount" TYPE DECIMAL(24,6);
ALTER TABLE "late_funds" ALTER COLUMN "amount" TYPE DECIMAL(24,6);
