import { isIP } from "node:net";
import { z } from "zod";

/** A unit could not start because one environment variable is missing or malformed. */
export class ConfigError extends Error {
  constructor(readonly variable: string, reason: string) {
    super(`invalid configuration: ${variable} ${reason}`);
  }
}

function isUrlOf(value: string, protocols: string[]): boolean {
  try {
    return protocols.includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

const MIN_SECRET_LENGTH = 16;

const truthy = new Set(["1", "true", "yes", "on"]);
const falsy = new Set(["0", "false", "no", "off"]);

/** Environment variable readers: each describes one variable's shape and default. */
export const env = {
  string: (fallback?: string) => (fallback === undefined ? z.string().min(1) : z.string().min(1).default(fallback)),
  port: (fallback: number) =>
    z.coerce.number({ error: "must be a port number" }).int("must be a port number").min(0).max(65535).default(fallback),
  int: (fallback: number, min = 0) => {
    const issue = `must be an integer of at least ${min}`;
    return z.coerce.number({ error: issue }).int(issue).min(min, issue).default(fallback);
  },
  bool: (fallback: boolean) =>
    z
      .string()
      .default(String(fallback))
      .refine((v) => truthy.has(v.toLowerCase()) || falsy.has(v.toLowerCase()), "must be true or false")
      .transform((v) => truthy.has(v.toLowerCase())),
  url: (fallback?: string, protocols: string[] = ["http:", "https:"]) => {
    const base = z.string().refine((v) => isUrlOf(v, protocols), `must be a URL (${protocols.join(" or ")})`);
    return fallback === undefined ? base : base.default(fallback);
  },
  /** A Postgres URL naming its database (postgres://user@host:5432/name). */
  databaseUrl: () =>
    z
      .string()
      .refine((v) => isUrlOf(v, ["postgres:", "postgresql:"]), "must be a URL (postgres: or postgresql:)")
      .refine((v) => !isUrlOf(v, ["postgres:", "postgresql:"]) || new URL(v).pathname.replace(/^\//, "") !== "", "must name its database (postgres://user@host:5432/<database>)"),
  /** One URL or several, comma-separated (e.g. the servers of a NATS cluster). */
  urls: (fallback: string, protocols: string[]) =>
    z
      .string()
      .refine((v) => v.split(",").every((part) => isUrlOf(part.trim(), protocols)), `must be one or more comma-separated URLs (${protocols.join(" or ")})`)
      .default(fallback),
  /**
   * A secret: its development value by default in local mode; outside it required, at least
   * `MIN_SECRET_LENGTH` characters, and never that development value (which anyone can read here).
   */
  secret: (source: NodeJS.ProcessEnv, devValue: string) =>
    isLocalMode(source)
      ? z.string().min(1).default(devValue)
      : z
          .string()
          .min(MIN_SECRET_LENGTH, `must be at least ${MIN_SECRET_LENGTH} characters outside local mode`)
          .refine((v) => v !== devValue, "must not be the development value outside local mode"),
  /**
   * The gateway's public origin that receipt links point at (receipts and the notifier sign them):
   * `http://127.0.0.1:8080` by default in local mode; outside it required, and HTTPS. Read without
   * trailing slashes.
   */
  publicBaseUrl: (source: NodeJS.ProcessEnv) => {
    const local = isLocalMode(source);
    const protocols = local ? ["http:", "https:"] : ["https:"];
    const url = z
      .string()
      .refine((v) => isUrlOf(v, protocols), local ? "must be a URL (http: or https:)" : "must be an https URL outside local mode")
      .transform((v) => v.replace(/\/+$/, ""));
    return local ? url.default("http://127.0.0.1:8080") : url;
  },
  logLevel: () => z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
};

/**
 * Reads and validates the variables a unit needs. Throws ConfigError naming the first bad variable;
 * `exitOnConfigError` turns that into one line on stderr and a non-zero exit.
 */
export function loadConfig<S extends z.ZodRawShape>(shape: S, source: NodeJS.ProcessEnv = process.env): z.infer<z.ZodObject<S>> {
  const present = Object.fromEntries(Object.keys(shape).flatMap((k) => (source[k] === undefined || source[k] === "" ? [] : [[k, source[k]]])));
  const result = z.object(shape).safeParse(present);
  if (!result.success) {
    const issue = result.error.issues[0];
    const variable = String(issue.path[0] ?? "environment");
    const reason = present[variable] === undefined ? "is required" : `${issue.message} (got ${JSON.stringify(present[variable])})`;
    throw new ConfigError(variable, reason);
  }
  return result.data;
}

/** LOCAL_MODE=true marks a developer machine: dev defaults for secrets, plain-HTTP links. */
export function isLocalMode(source: NodeJS.ProcessEnv = process.env): boolean {
  return truthy.has((source.LOCAL_MODE ?? "").toLowerCase());
}

/**
 * The address every port of the unit listens on: `BIND_HOST` when set (an IP address), else
 * 127.0.0.1 in local mode (a developer machine exposes nothing, the sandbox least of all) and
 * 0.0.0.0 otherwise (a container, reached through its Service).
 */
export function bindHost(source: NodeJS.ProcessEnv = process.env): string {
  const given = source.BIND_HOST;
  if (given === undefined || given === "") return isLocalMode(source) ? "127.0.0.1" : "0.0.0.0";
  if (!isIP(given)) throw new ConfigError("BIND_HOST", `must be an IP address (got ${JSON.stringify(given)})`);
  return given;
}

/** Default of a value a developer machine may leave unset: `devValue` in local mode, none (required) otherwise. */
export function localDefault(source: NodeJS.ProcessEnv, devValue: string): string | undefined {
  return isLocalMode(source) ? devValue : undefined;
}
