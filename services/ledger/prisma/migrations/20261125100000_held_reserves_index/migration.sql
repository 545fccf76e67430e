-- The orphan-reserve sweep reads reserves still held, by age; consumed and released ones leave it.
CREATE INDEX "reserves_held_idx" ON "reserves" ("created_at") WHERE "status" = 'held';
