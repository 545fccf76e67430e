import { redactUrl } from "@pgw/kit/db";
import { natsServersShown } from "@pgw/kit/events";
import path from "node:path";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "./embedded-postgres";
import { startNatsServer, type NatsServer } from "./nats-server";
import type { ProcessExit } from "./process-utils";

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

/** An embedded server `startEmbeddedInfra` started, as the launcher supervises it. */
export interface EmbeddedServer {
  name: "Postgres" | "nats-server";
  /** Its port on 127.0.0.1; a restart keeps it. */
  port: number;
  /** The current process. */
  readonly pid: number | undefined;
  /** Resolves once the current process has exited, however (also when stopped). */
  readonly exited: Promise<ProcessExit>;
  /**
   * Starts the server again after it exited, on the same port and data directory; resolves once it
   * accepts connections. Rejects when that fails (it may be tried again) or when `stop()` has begun.
   */
  restart(): Promise<void>;
}

export interface EmbeddedInfra {
  /** Postgres server URL (database `postgres`); each unit uses its own database on this server. */
  databaseUrl: string;
  /** NATS server URL with JetStream. */
  natsUrl: string;
  /** True when Postgres / NATS were started here (false when given by URL). */
  embedded: { postgres: boolean; nats: boolean };
  /** The embedded servers' current processes (to clean up after a launcher that was killed). */
  readonly processes: { postgres?: { pid: number; dataDir: string }; nats?: { pid: number; storeDir: string } };
  /** The servers started here (none for one given by URL). */
  servers: EmbeddedServer[];
  /** Stops what was started here (NATS first, then Postgres), after a restart under way; servers given by URL are left alone. */
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
  let stopping = false;
  const restarting = new Set<Promise<unknown>>();

  const postgresOptions = (port?: number) => ({
    dataDir: path.join(rootDir, "postgres"),
    port,
    log: options.postgresLog,
    notice: options.log,
    ownProcessGroup: options.ownProcessGroups,
  });
  const natsOptions = (port?: number) => ({
    storeDir: path.join(rootDir, "nats"),
    port,
    log: options.natsLog,
    notice: options.log,
    ownProcessGroup: options.ownProcessGroups,
  });

  const stop = async () => {
    stopping = true;
    await Promise.allSettled([...restarting]);
    await nats?.stop().catch((err: unknown) => log(`stopping nats-server failed: ${String(err)}`));
    await postgres?.stop().catch((err: unknown) => log(`stopping Postgres failed: ${String(err)}`));
  };

  /** Runs a restart so that `stop()` waits for it and then stops what it started. */
  const restartWith = async (start: () => Promise<void>) => {
    if (stopping) throw new Error("stopping");
    const run = start();
    restarting.add(run);
    try {
      await run;
    } finally {
      restarting.delete(run);
    }
  };

  try {
    let databaseUrl = options.databaseUrl;
    if (databaseUrl === undefined) {
      log(`starting embedded Postgres (data in ${path.join(rootDir, "postgres")})`);
      postgres = await startEmbeddedPostgres(postgresOptions());
      databaseUrl = postgres.url;
      log(`Postgres is up on 127.0.0.1:${postgres.port}`);
    } else {
      log(`using the Postgres server at ${redactUrl(databaseUrl)}`);
    }

    let natsUrl = options.natsUrl;
    if (natsUrl === undefined) {
      log(`starting nats-server (JetStream store in ${path.join(rootDir, "nats")})`);
      nats = await startNatsServer(natsOptions());
      natsUrl = nats.url;
      log(`nats-server is up on 127.0.0.1:${nats.port}`);
    } else {
      log(`using the NATS server at ${natsServersShown(natsUrl)}`);
    }

    /** The launcher's handle on a server: always its current process, restarted on its own port. */
    const supervised = (name: EmbeddedServer["name"], port: number, current: () => { pid: number | undefined; exited: Promise<ProcessExit> }, start: () => Promise<void>): EmbeddedServer => ({
      name,
      port,
      get pid() {
        return current().pid;
      },
      get exited() {
        return current().exited;
      },
      restart: () => restartWith(start),
    });
    const servers: EmbeddedServer[] = [];
    if (postgres) {
      const { port } = postgres;
      servers.push(supervised("Postgres", port, () => postgres!, async () => void (postgres = await startEmbeddedPostgres(postgresOptions(port)))));
    }
    if (nats) {
      const { port } = nats;
      servers.push(supervised("nats-server", port, () => nats!, async () => void (nats = await startNatsServer(natsOptions(port)))));
    }

    return {
      databaseUrl,
      natsUrl,
      embedded: { postgres: postgres !== undefined, nats: nats !== undefined },
      get processes() {
        const processes: EmbeddedInfra["processes"] = {};
        if (postgres?.pid !== undefined) processes.postgres = { pid: postgres.pid, dataDir: postgres.dataDir };
        if (nats?.pid !== undefined) processes.nats = { pid: nats.pid, storeDir: nats.storeDir };
        return processes;
      },
      servers,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
