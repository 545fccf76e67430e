import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const DEV_CERTS = path.join(__dirname, "..", "..", "deploy", "pki", "dev-certs.sh");

/**
 * Throwaway certificates for mutual TLS between units, made by deploy/pki/dev-certs.sh (what compose
 * uses): each named PKI is a CA of its own with a certificate per unit, `<unit>.pem`, naming it
 * spiffe://pgw/unit/<unit>, and one per team asked for, `team-<team>.pem`.
 */
export function throwawayPki() {
  const dir = mkdtempSync(path.join(tmpdir(), "pgw-pki-"));
  const file = (pki: string, name: string) => path.join(dir, pki, name);
  return {
    file,
    /** Makes PKI `pki`: its CA, a certificate per unit, and one per team named. */
    make(pki: string, teams: string[] = []): void {
      execFileSync(DEV_CERTS, [path.join(dir, pki), ...teams], { stdio: "pipe" });
    },
    /** The GRPC_TLS_* variables of `holder` (a unit, or `team-<team>`) of PKI `pki`, trusting PKI `ca`'s CA (the same unless told). */
    env: (holder: string, pki = "pgw", ca = pki) => ({
      GRPC_TLS_CA_FILE: file(ca, "ca.pem"),
      GRPC_TLS_CERT_FILE: file(pki, `${holder}.pem`),
      GRPC_TLS_KEY_FILE: file(pki, `${holder}.key`),
    }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
