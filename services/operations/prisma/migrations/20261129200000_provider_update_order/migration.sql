-- The sequence of the latest provider update applied to each operation (routing numbers an
-- operation's updates 1, 2, …): an update whose predecessor has not been applied yet waits for it.
ALTER TABLE "operations" ADD COLUMN "provider_updates_applied" INTEGER NOT NULL DEFAULT 0;
