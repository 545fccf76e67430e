-- The commission tariff the ledger quoted an operation's create with (its Quote or Reserve answer),
-- in the settlement currency: the completion settles its figures with it, without asking the
-- ledger again. NULL on operations created before it was kept; those still ask the ledger's Quote.
ALTER TABLE "operations" ADD COLUMN "tariff_percent" DECIMAL(10,4);
ALTER TABLE "operations" ADD COLUMN "tariff_fixed" DECIMAL(30,6);
ALTER TABLE "operations" ADD COLUMN "tariff_minimum" DECIMAL(30,6);
