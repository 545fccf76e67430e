-- Every change to the tariffs, by whatever writer (psql included), notifies channel ledger_tariffs
-- at commit, so ledger replicas drop the tariffs they cache for Quote (services/ledger/src/tariff-cache.ts).
CREATE FUNCTION "notify_tariffs_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('ledger_tariffs', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER "tariffs_changed" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "tariffs"
  FOR EACH STATEMENT EXECUTE FUNCTION "notify_tariffs_changed"();
