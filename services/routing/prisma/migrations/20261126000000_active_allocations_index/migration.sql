-- The provider reconciliation's candidates: active allocations, least recently changed first.
CREATE INDEX "allocations_active_updated_at_idx" ON "allocations" ("updated_at") WHERE "status" = 'active';
