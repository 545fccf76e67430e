-- ListStatusEvents (consumers' reconciliation) reads published events of one subject by time.
CREATE INDEX "outbox_subject_created_at_idx" ON "outbox"("subject", "created_at");
