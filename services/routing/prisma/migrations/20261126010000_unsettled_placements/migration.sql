-- Provider creates whose outcome is unknown (timed out, or an answer we could not read): the provider
-- may hold an operation nobody tracks. Checked until settled (unsettled-placements.ts).
CREATE TABLE "unsettled_placements" (
  "id" UUID NOT NULL PRIMARY KEY,
  "operation_id" UUID NOT NULL,
  "provider_id" UUID NOT NULL REFERENCES "providers"("id"),
  "type" TEXT NOT NULL,
  "checks" INTEGER NOT NULL DEFAULT 0,
  "next_check_at" TIMESTAMPTZ(3) NOT NULL,
  "outcome" TEXT,
  "settled_at" TIMESTAMPTZ(3),
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "unsettled_placements_due_idx" ON "unsettled_placements" ("next_check_at") WHERE "settled_at" IS NULL;
