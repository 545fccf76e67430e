/**
 * NATS connection and the JetStream stream every service publishes to.
 * No business rules: subjects under `pgw.>` are the services' business.
 */
import { readFileSync } from "node:fs";
import {
  connect,
  credsAuthenticator,
  DebugEvents,
  Events,
  nanos,
  NatsError,
  RetentionPolicy,
  StorageType,
  type ConnectionOptions,
  type JetStreamManager,
  type NatsConnection,
  type StreamConfig,
  type StreamInfo,
} from "nats";
import { z } from "zod";
import { ConfigError, env, isLocalMode, loadConfig } from "../runtime/config";
import { succeedsWithin } from "../runtime/within";

/** Name of the JetStream stream that carries every event. */
export const STREAM_NAME = "PGW";
/** Subjects stream {@link STREAM_NAME} captures. */
export const STREAM_SUBJECTS: readonly string[] = ["pgw.>"];
/** JetStream de-duplication window of the stream (Nats-Msg-Id), in milliseconds. */
export const DUPLICATE_WINDOW_MS = 2 * 60 * 1000;

/** The logger kit runtime code writes to (a pino logger fits). */
export interface KitLog {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** JetStream API error codes this module reacts to. */
const JS_ERR_STREAM_NOT_FOUND = 10059;
const JS_ERR_STREAM_NAME_IN_USE = 10058;

/** The JetStream `err_code` of an API error, if it is one. */
export function jsErrorCode(err: unknown): number | undefined {
  return err instanceof NatsError ? err.jsError()?.err_code : undefined;
}

/** Credentials for a NATS server that requires them: user and password, a token, or a .creds file's contents (JWT + NKey). */
export interface NatsAuth {
  user?: string;
  pass?: string;
  token?: string;
  creds?: Uint8Array;
}

/** NATS_URL: the NATS servers, comma-separated (credentials may be written into them). */
export const natsUrlVariable = () => env.urls("nats://127.0.0.1:4222", ["nats:", "tls:"]);

/**
 * The unit's NATS credentials from NATS_USER + NATS_PASSWORD, NATS_TOKEN or NATS_CREDS_FILE (at most
 * one kind), the creds file read here, once. Outside local mode the unit must have credentials, in
 * these variables or written into NATS_URL: whoever can publish on `pgw.>` can forge the events the
 * units act on, so NATS must know who is publishing (deploy/nats gives each unit a user of its own).
 * Throws ConfigError for missing, incomplete or ambiguous credentials, or a creds file that cannot be read.
 */
export function loadNatsAuth(source: NodeJS.ProcessEnv = process.env): NatsAuth {
  const optional = z.string().optional();
  const { NATS_URL, NATS_USER, NATS_PASSWORD, NATS_TOKEN, NATS_CREDS_FILE } = loadConfig(
    { NATS_URL: natsUrlVariable(), NATS_USER: optional, NATS_PASSWORD: optional, NATS_TOKEN: optional, NATS_CREDS_FILE: optional },
    source,
  );
  if ((NATS_USER === undefined) !== (NATS_PASSWORD === undefined)) throw new ConfigError(NATS_USER === undefined ? "NATS_USER" : "NATS_PASSWORD", "is required with the other (NATS_USER and NATS_PASSWORD go together)");
  const kinds = [NATS_USER, NATS_TOKEN, NATS_CREDS_FILE].filter((v) => v !== undefined).length;
  if (kinds > 1) throw new ConfigError(NATS_TOKEN !== undefined ? "NATS_TOKEN" : "NATS_CREDS_FILE", "must be the only kind of NATS credentials (user and password, token, or creds file)");
  if (kinds === 0 && !isLocalMode(source) && Object.keys(natsTarget(NATS_URL).options).length === 0) {
    throw new ConfigError("NATS_USER", "and NATS_PASSWORD (or NATS_CREDS_FILE, NATS_TOKEN, or credentials in NATS_URL) are required outside local mode");
  }
  let creds: Uint8Array | undefined;
  if (NATS_CREDS_FILE !== undefined) {
    try {
      creds = new Uint8Array(readFileSync(NATS_CREDS_FILE));
    } catch (err) {
      throw new ConfigError("NATS_CREDS_FILE", `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
  }
  return { user: NATS_USER, pass: NATS_PASSWORD, token: NATS_TOKEN, creds };
}

/**
 * The server list of `url` (comma-separated) and the connect options for `auth`. The nats client
 * ignores credentials written into a server URL (nats://user:pass@host), so they are taken out of
 * the URLs (which then appear in logs without them) and used when `auth` names none.
 */
export function natsTarget(url: string, auth: NatsAuth = {}): { servers: string[]; options: Partial<ConnectionOptions> } {
  let fromUrl: NatsAuth = {};
  const servers = url
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const u = new URL(s);
      if (!u.username && !u.password) return s;
      const user = decodeURIComponent(u.username);
      fromUrl = u.password ? { user, pass: decodeURIComponent(u.password) } : { token: user };
      u.username = "";
      u.password = "";
      return u.toString();
    });
  const chosen = auth.user !== undefined || auth.token !== undefined || auth.creds !== undefined ? auth : fromUrl;
  const options: Partial<ConnectionOptions> = {};
  if (chosen.user !== undefined) Object.assign(options, { user: chosen.user, pass: chosen.pass ?? "" });
  if (chosen.token !== undefined) options.token = chosen.token;
  if (chosen.creds !== undefined) options.authenticator = credsAuthenticator(chosen.creds);
  return { servers, options };
}

/** The servers of `url` as they may be shown (messages, banners): without their credentials. */
export const natsServersShown = (url: string): string => natsTarget(url).servers.join(", ");

const NATS_WAIT_LOG_MS = 5000;

const exitOnLostNats = (log: KitLog) => (err: Error) => {
  log.error({ err }, "nats connection lost for good (the client stopped reconnecting); exiting so the unit restarts");
  process.exit(1);
};

/**
 * Connects to NATS (`url` may list several servers, comma-separated) and keeps reconnecting
 * forever: the first connect waits until a server answers, and later disconnects are retried
 * every 250 ms. Disconnects, reconnects and async errors are logged.
 *
 * @param name client name shown by the server's monitoring (e.g. the service name), and the prefix of
 *   the connection's reply subjects, `_INBOX_<name>.…`: the server's permissions (deploy/nats) let
 *   each unit receive replies and JetStream deliveries on its own inboxes only
 * @param auth credentials when the server requires them (loadNatsAuth); or written into `url`
 * @param onLost called when the connection ends for good on its own: the client stops reconnecting
 *   after the server refused the credentials twice (a rotation half done). By default the process
 *   exits 1, so Kubernetes (or the launcher) restarts it, instead of running on not ready for ever.
 */
export async function connectNats(url: string, name: string, log: KitLog, auth: NatsAuth = {}, onLost: (err: Error) => void = exitOnLostNats(log)): Promise<NatsConnection> {
  const { servers, options } = natsTarget(url, auth);
  // The first connect retries an unreachable server for ever, silently: say so while it does (a
  // server that refuses the credentials fails the connect at once instead).
  const waiting = setInterval(() => log.warn({ servers }, "nats not reachable yet; still trying"), NATS_WAIT_LOG_MS);
  let nc: NatsConnection;
  try {
    nc = await connect({
      ...options,
      servers,
      name,
      inboxPrefix: `_INBOX_${name}`,
      maxReconnectAttempts: -1,
      waitOnFirstConnect: true,
      reconnectTimeWait: 250,
      reconnectJitter: 100,
      pingInterval: 10_000,
      // Otherwise every request and JetStream publish builds two Errors up front, stack and all, in
      // case it times out (41–47 µs of CPU per publish against 27 here); a timeout still says what timed out.
      noAsyncTraces: true,
    });
  } catch (err) {
    // Only a refusal ends the first connect (an unreachable server is retried): say where and what.
    throw new Error(`the NATS server (${servers.join(", ")}) refused the connection: ${(err as Error).message}; check NATS_USER/NATS_PASSWORD, NATS_TOKEN, NATS_CREDS_FILE or the credentials in NATS_URL`, { cause: err });
  } finally {
    clearInterval(waiting);
  }
  log.info({ server: nc.getServer(), name }, "nats connected");
  void (async () => {
    for await (const s of nc.status()) {
      switch (s.type) {
        case Events.Disconnect:
          log.warn({ server: s.data }, "nats disconnected");
          break;
        case Events.Reconnect:
          log.info({ server: s.data }, "nats reconnected");
          break;
        case Events.Error:
          log.error({ err: s.data }, "nats async error");
          break;
        case DebugEvents.StaleConnection:
          log.warn({ server: s.data }, "nats connection stale");
          break;
        default:
          break;
      }
    }
  })().catch(() => undefined);
  void nc.closed().then((err) => {
    if (err) onLost(err);
    else log.info({ name }, "nats connection closed");
  });
  return nc;
}

/** How long the stream keeps events: consumers that were down longer rely on reconciliation. */
export const STREAM_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

// Namespace of a connection (NATS_NAMESPACE): lets several deployments (or test stacks) share one
// NATS server without seeing each other's events. Kept beside the connection so the outbox relay,
// consumers and subscriptions all apply it without every service passing it around.
const namespaces = new WeakMap<NatsConnection, string>();

/** Marks every subject and durable used through `nc` as belonging to `namespace` ("" = none). */
export function setNamespace(nc: NatsConnection, namespace: string): void {
  namespaces.set(nc, namespace);
}

/**
 * `pgw.x.y` as seen through `nc`: `pgw.<namespace>.x.y` when the connection has a namespace. The
 * same for `pgw_live.x.y`, the root of subjects outside the stream (core NATS messages nobody stores,
 * for whoever listens at the moment).
 */
export function scopedSubject(nc: NatsConnection, subject: string): string {
  const ns = namespaces.get(nc);
  return ns ? subject.replace(/^(pgw|pgw_live)\./, `$1.${ns}.`) : subject;
}

/** A durable consumer name as seen through `nc` (prefixed with its namespace, if any). */
export function scopedDurable(nc: NatsConnection, durable: string): string {
  const ns = namespaces.get(nc);
  return ns ? `${ns}-${durable}` : durable;
}

/** The stream configuration {@link ensureStream} converges to. */
export function streamConfig(replicas = 1): Partial<StreamConfig> {
  return {
    name: STREAM_NAME,
    subjects: [...STREAM_SUBJECTS],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    max_age: nanos(STREAM_MAX_AGE_MS),
    num_replicas: replicas,
  };
}

/** True when the existing stream already has the subjects and de-dup window we want. */
function upToDate(info: StreamInfo, want: Partial<StreamConfig>): boolean {
  const subjects = [...(info.config.subjects ?? [])].sort().join(",");
  return (
    subjects === [...(want.subjects ?? [])].sort().join(",") &&
    info.config.duplicate_window === want.duplicate_window &&
    info.config.max_age === want.max_age &&
    (want.num_replicas === undefined || info.config.num_replicas === want.num_replicas)
  );
}

/** True when the server refused a request because the connection's user may not publish on its subject. */
const isPermissionError = (err: unknown): boolean => err instanceof NatsError && err.isPermissionError();

const STREAM_POLL_MS = 500;

/** The stream's info, or undefined while it does not exist. */
async function streamInfo(jsm: JetStreamManager): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(STREAM_NAME);
  } catch (err) {
    if (jsErrorCode(err) !== JS_ERR_STREAM_NOT_FOUND) throw err;
    return undefined;
  }
}

/** Waits until another process has created the stream. */
async function awaitStream(jsm: JetStreamManager, log?: KitLog): Promise<StreamInfo> {
  log?.warn({ stream: STREAM_NAME }, "this unit's NATS user may not create the stream: waiting for the unit that may (operations)");
  for (;;) {
    const info = await streamInfo(jsm);
    if (info) return info;
    await new Promise((r) => setTimeout(r, STREAM_POLL_MS));
  }
}

/**
 * Creates stream {@link STREAM_NAME} (subjects `pgw.>`, file storage, 2-minute duplicate window),
 * or updates an existing one whose subjects / window differ. Idempotent and safe when several
 * processes run it at once. Resolves to the stream's info.
 *
 * Where the server's permissions let only one unit manage the stream (deploy/nats: operations), the
 * others are refused: they wait until it exists, and use it as it is.
 *
 * @param opts.replicas stream replicas in a clustered JetStream (default 1)
 * @param opts.log says why a unit waits for the stream
 */
export async function ensureStream(nc: NatsConnection, opts: { replicas?: number; log?: KitLog } = {}): Promise<StreamInfo> {
  const jsm = await nc.jetstreamManager();
  const want = streamConfig(opts.replicas ?? 1);
  for (let attempt = 0; ; attempt++) {
    const info = await streamInfo(jsm);
    if (info && upToDate(info, want)) return info;
    try {
      return info ? await jsm.streams.update(STREAM_NAME, { ...info.config, ...want }) : await jsm.streams.add(want);
    } catch (err) {
      if (isPermissionError(err)) return info ?? awaitStream(jsm, opts.log);
      // Another process created it between our info and add: converge on the next pass.
      if (jsErrorCode(err) !== JS_ERR_STREAM_NAME_IN_USE || attempt >= 2) throw err;
    }
  }
}

/**
 * Readiness probe: `true` when the connection is open and the server answers a ping within
 * `timeoutMs`; `false` when closed, disconnected, slow or failing. Never throws.
 */
export async function natsReady(nc: NatsConnection, timeoutMs: number): Promise<boolean> {
  if (nc.isClosed() || nc.isDraining()) return false;
  return succeedsWithin(nc.rtt(), timeoutMs);
}
