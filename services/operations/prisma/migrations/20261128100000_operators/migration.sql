-- Operators of the admin API: each signs in with a token of its own (shown once; only its SHA-256
-- is stored) and is the actor recorded on what it decides.
CREATE TABLE "operators" (
  "id" UUID NOT NULL PRIMARY KEY,
  "name" TEXT NOT NULL,
  "token_hash" TEXT NOT NULL,
  "created_by" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "revoked_at" TIMESTAMPTZ(3)
);
CREATE UNIQUE INDEX "operators_token_hash_key" ON "operators"("token_hash");
-- The name is what the audit records: no two active operators share one.
CREATE UNIQUE INDEX "operators_active_name_key" ON "operators"("name") WHERE "revoked_at" IS NULL;
