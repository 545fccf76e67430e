/**
 * The tables the kit works on in every unit's database (`sql/outbox.sql`) as Kysely sees them:
 * camelCase, as prisma-kysely generates them into each unit's `DB` (CamelCasePlugin maps them to the
 * snake_case names in SQL), so a unit's `PgDb<DB>` holds these two tables among its own.
 */
import type { ColumnType, Kysely } from "kysely";

/** A timestamp column: read as Date, written as a Date or an ISO string. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** A column with a default, which an insert may leave out. */
type Defaulted<T> = T extends ColumnType<infer S, infer I, infer U> ? ColumnType<S, I | undefined, U> : ColumnType<T, T | undefined, T>;

/** The kit's tables in every unit's database, exactly as each unit's generated `DB` has them. */
export interface KitTables {
  /** Events written in the producer's transaction, published by the relay (outbox.ts). */
  outbox: {
    id: string;
    subject: string;
    payload: Buffer;
    /** The W3C trace context of the transaction that wrote the event (NULL when none was traced). */
    traceparent: string | null;
    createdAt: Defaulted<Timestamp>;
    /** NULL until the relay has the event's PubAck. */
    publishedAt: Timestamp | null;
  };
  /** Event ids each consumer name has handled (consumer.ts). */
  processedEvents: {
    consumer: string;
    eventId: string;
    processedAt: Defaulted<Timestamp>;
  };
}

/**
 * The unit's database (or transaction) seen through the kit's tables. Units pass their own
 * `PgDb<DB>` / `PgTx<DB>` (or any Kysely on them); every unit's `DB` has these tables, which test/shared-tables.test.ts
 * holds each unit's migrations to.
 */
export function kitTables(db: Kysely<any>): Kysely<KitTables> {
  return db as Kysely<KitTables>;
}
