-- One receipt review per operation at a time across every receipts replica (upload-confirmation.ts):
-- a review claims its operation here and deletes the row when it ends; a crashed one's claim lapses.
CREATE TABLE "review_leases" (
  "operation_id" UUID NOT NULL PRIMARY KEY,
  "holder" UUID NOT NULL,
  "expires_at" TIMESTAMPTZ(3) NOT NULL
);
