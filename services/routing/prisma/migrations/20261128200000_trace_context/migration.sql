-- The trace context of the transaction that wrote each event (kit outbox.ts), sent with it as `traceparent`.
ALTER TABLE "outbox" ADD COLUMN "traceparent" TEXT;
-- The trace context of the Allocate that placed the operation: a provider callback continues it.
ALTER TABLE "allocations" ADD COLUMN "traceparent" TEXT;
