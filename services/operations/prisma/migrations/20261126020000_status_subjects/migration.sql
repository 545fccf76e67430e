-- Status changes are published on one subject per status (pgw.operation.status_changed.<class>.<status>,
-- @pgw/proto/subjects): ListStatusEvents reads them all by time through this partial index, whose
-- predicate its query repeats word for word.
DROP INDEX "outbox_subject_created_at_idx";
CREATE INDEX "outbox_status_changed_created_at_idx" ON "outbox" ("created_at", "id") WHERE "subject" LIKE 'pgw.operation.status\_changed.%';
