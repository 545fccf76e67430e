import type { DataKeys } from "@pgw/kit/db";
import type { Logger } from "@pgw/kit/runtime";
import type { Peers } from "../connectors/peers";
import type { Db, Sql } from "../store";

/** What the operations unit's handlers work with (main.ts wires it). */
export interface Deps {
  /** Prisma Client: configuration CRUD that publishes nothing. */
  db: Db;
  /** The unit's database on Kysely: operations, and every change that writes an event. */
  sql: Sql;
  log: Logger;
  /** Routing and ledger, called during a create and a completion. */
  peers: Peers;
  /** Seal the request's hash and card numbers (the store keeps them sealed). */
  keys: DataKeys;
  /** Local mode accepts plain-HTTP webhook URLs. */
  localMode: boolean;
  /** Secret of the keyed hash under which API keys are stored. */
  apiKeyHashSecret: string;
  /** The whole create, provider wait included (up to 15 s: docs/api.md, Endpoints). */
  createDeadlineMs: number;
  /** A cancel not durable within this is a 503: the caller must not assume anything. */
  cancelDeadlineMs: number;
}
