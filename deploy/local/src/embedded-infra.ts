import { redactUrl } from "@pgw/kit/db";
import { natsServersShown } from "@pgw/kit/events";
import path from "node:path";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "./embedded-postgres";
import { startNatsServer, type NatsServer } from "./nats-server";

export interface EmbeddedInfraOptions {
  /** Directory holding the servers' data: `<rootDir>/postgres` and `<rootDir>/nats` (e.g. `<repo>/.data`). */
  rootDir: string;
  /** Use this Postgres server instead of starting the embedded one. */
  databaseUrl?: string;
  /** Use this NATS server instead of starting nats-server. */
  natsUrl?: string;
  /** Launcher messages (one human line each). */
  log?: (line: string) => void;
  /** Output of the Postgres server, line by line. */
  postgresLog?: (line: string) => void;
  /** Output of nats-server, line by line. */
  natsLog?: (line: string) => void;
  /** Servers in process groups of their own (the launcher stops them itself on Ctrl-C). Default false. */
  ownProcessGroups?: boolean;
}

export interface EmbeddedInfra {
  /** Postgres server URL (database `postgres`); each unit uses its own database on this server. */
  databaseUrl: string;
  /** NATS server URL with JetStream. */
  natsUrl: string;
  /** True when Postgres / NATS were started here (false when given by URL). */
  embedded: { postgres: boolean; nats: boolean };
  /** The embedded servers' processes (to clean up after a launcher that was killed). */
  processes: { postgres?: { pid: number; dataDir: string }; nats?: { pid: number; storeDir: string } };
  /** Stops what was started here (NATS first, then Postgres); servers given by URL are left alone. */
  stop(): Promise<void>;
}

/**
 * Starts embedded Postgres and nats-server (JetStream) with their data under `rootDir`, both on
 * free ports of 127.0.0.1 (never 5432 / 4222); either one is skipped when its URL is given.
 * A second start on the same directory reuses the data. Used by `start` and by the test suite.
 */
export async function startEmbeddedInfra(options: EmbeddedInfraOptions): Promise<EmbeddedInfra> {
  const rootDir = path.resolve(options.rootDir);
  const log = options.log ?? (() => undefined);
  let postgres: EmbeddedPostgres | undefined;
  let nats: NatsServer | undefined;

  const stop = async () => {
    await nats?.stop().catch((err: unknown) => log(`stopping nats-server failed: ${String(err)}`));
    await postgres?.stop().catch((err: unknown) => log(`stopping Postgres failed: ${String(err)}`));
  };

  try {
    let databaseUrl = options.databaseUrl;
    if (databaseUrl === undefined) {
      log(`starting embedded Postgres (data in ${path.join(rootDir, "postgres")})`);
      postgres = await startEmbeddedPostgres({
        dataDir: path.join(rootDir, "postgres"),
        log: options.postgresLog,
        notice: options.log,
        ownProcessGroup: options.ownProcessGroups,
      });
      databaseUrl = postgres.url;
      log(`Postgres is up on 127.0.0.1:${postgres.port}`);
    } else {
      log(`using the Postgres server at ${redactUrl(databaseUrl)}`);
    }

    let natsUrl = options.natsUrl;
    if (natsUrl === undefined) {
      log(`starting nats-server (JetStream store in ${path.join(rootDir, "nats")})`);
      nats = await startNatsServer({
        storeDir: path.join(rootDir, "nats"),
        log: options.natsLog,
        notice: options.log,
        ownProcessGroup: options.ownProcessGroups,
      });
      natsUrl = nats.url;
      log(`nats-server is up on 127.0.0.1:${nats.port}`);
    } else {
      log(`using the NATS server at ${natsServersShown(natsUrl)}`);
    }

    const processes: EmbeddedInfra["processes"] = {};
    if (postgres?.pid !== undefined) processes.postgres = { pid: postgres.pid, dataDir: postgres.dataDir };
    if (nats?.pid !== undefined) processes.nats = { pid: nats.pid, storeDir: nats.storeDir };
    return { databaseUrl, natsUrl, embedded: { postgres: postgres !== undefined, nats: nats !== undefined }, processes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
