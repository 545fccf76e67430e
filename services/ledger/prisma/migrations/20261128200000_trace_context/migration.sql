-- The trace context of the transaction that wrote each event (kit outbox.ts), sent with it as `traceparent`.
ALTER TABLE "outbox" ADD COLUMN "traceparent" TEXT;
