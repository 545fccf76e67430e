import { readFileSync } from "node:fs";
import { z } from "zod";
import { ConfigError, isLocalMode, loadConfig } from "../runtime/config";

/**
 * Mutual TLS between units: every gRPC server asks for a client certificate signed by the internal
 * CA, and every client checks the server's certificate against it and presents its own. The
 * certificate names its holder (rpc-access.ts), and each method answers only the callers it names.
 * Without it anyone who reaches a gRPC port could call, say, Ledger.Adjust: it is required outside
 * local mode.
 */
export interface GrpcTls {
  /** The internal CA (PEM): signs every unit's certificate, and is the only one trusted. */
  ca: Buffer;
  /** This unit's certificate chain and key (PEM), shown as a server and as a client. */
  cert: Buffer;
  key: Buffer;
}

const FILES = { GRPC_TLS_CA_FILE: "ca", GRPC_TLS_CERT_FILE: "cert", GRPC_TLS_KEY_FILE: "key" } as const;

/**
 * The unit's gRPC TLS material from GRPC_TLS_CA_FILE, GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE, read
 * here, once (a renewed certificate takes effect at the next start): all three, or none (null:
 * cleartext, allowed only in local mode and for a run that only migrates or re-seals, which serves
 * and calls nothing). Throws ConfigError for a missing or incomplete set or a file that cannot be read.
 */
export function loadGrpcTls(source: NodeJS.ProcessEnv = process.env): GrpcTls | null {
  const optional = z.string().min(1).optional();
  const paths = loadConfig({ GRPC_TLS_CA_FILE: optional, GRPC_TLS_CERT_FILE: optional, GRPC_TLS_KEY_FILE: optional }, source);
  const names = Object.keys(FILES) as (keyof typeof FILES)[];
  const missing = names.filter((name) => paths[name] === undefined);
  if (missing.length === names.length) {
    if (isLocalMode(source) || source.MIGRATIONS === "only" || source.DATA_RESEAL === "only") return null;
    throw new ConfigError("GRPC_TLS_CA_FILE", "and GRPC_TLS_CERT_FILE, GRPC_TLS_KEY_FILE are required outside local mode (units authenticate each other by mutual TLS)");
  }
  if (missing.length > 0) throw new ConfigError(missing[0], `is required with ${names.filter((n) => !missing.includes(n)).join(" and ")} (gRPC TLS needs the CA, the certificate and its key)`);
  const tls: Partial<GrpcTls> = {};
  for (const name of names) {
    try {
      tls[FILES[name]] = readFileSync(paths[name]!);
    } catch (err) {
      throw new ConfigError(name, `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
  }
  return tls as GrpcTls;
}

