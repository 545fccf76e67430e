-- Transactional outbox and consumer idempotency tables (see services/kit/src/events/outbox.ts and consumer.ts).
-- The one definition of these tables: every unit that has them creates them so in its migrations
-- (test/shared-tables.test.ts checks each one against this file).
CREATE TABLE "outbox" ("id" UUID NOT NULL PRIMARY KEY, "subject" TEXT NOT NULL, "payload" BYTEA NOT NULL, "traceparent" TEXT, "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP, "published_at" TIMESTAMPTZ(3));
CREATE INDEX "outbox_unpublished_idx" ON "outbox" ("created_at") WHERE "published_at" IS NULL;
CREATE TABLE "processed_events" ("consumer" TEXT NOT NULL, "event_id" UUID NOT NULL, "processed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY ("consumer", "event_id"));
-- Housekeeping (housekeeping.ts) deletes old event records by these columns.
CREATE INDEX "outbox_published_at_idx" ON "outbox" ("published_at");
CREATE INDEX "processed_events_processed_at_idx" ON "processed_events" ("processed_at");
