-- What a payer paid or a payout paid out is kept exactly as the test or demo sent it (USDT has 6
-- places, and a test may send more than a currency holds), so these columns take 18 places.
ALTER TABLE "sandbox_operations" ALTER COLUMN "paid_amount" TYPE DECIMAL(38,18);
ALTER TABLE "sandbox_legs" ALTER COLUMN "amount" TYPE DECIMAL(38,18);
ALTER TABLE "sandbox_evidence_items" ALTER COLUMN "amount" TYPE DECIMAL(38,18);
