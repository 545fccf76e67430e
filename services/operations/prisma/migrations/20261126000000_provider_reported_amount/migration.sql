-- Money the provider reported as arrived while the payment waited for a receipt review or a manual
-- check, which decide its outcome: kept so that a payment ending without it (cancelled, declined,
-- expired) records it as late funds instead of losing track of it.
ALTER TABLE "operations" ADD COLUMN "provider_reported_amount" DECIMAL(20,2);
