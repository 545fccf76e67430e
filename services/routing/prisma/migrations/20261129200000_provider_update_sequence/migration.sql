-- How many provider updates an operation's allocation has published: each update carries its
-- number (ProviderUpdate.sequence), so operations applies them in the order routing wrote them.
ALTER TABLE "allocations" ADD COLUMN "provider_updates" INTEGER NOT NULL DEFAULT 0;
