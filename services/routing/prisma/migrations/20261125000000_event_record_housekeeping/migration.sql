-- Housekeeping (kit housekeeping.ts) deletes event records older than their retention in batches.
CREATE INDEX "outbox_published_at_idx" ON "outbox"("published_at");
CREATE INDEX "processed_events_processed_at_idx" ON "processed_events"("processed_at");
