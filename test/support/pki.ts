import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * Throwaway certificates for gRPC mutual TLS, made with the openssl CLI: each named PKI is a CA and
 * one unit certificate it signs, for 127.0.0.1 and localhost, usable as server and as client.
 */
export function throwawayPki() {
  const dir = mkdtempSync(path.join(tmpdir(), "pgw-pki-"));
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "pipe" });
  return {
    file,
    /** Makes `<name>-ca.pem` and a unit certificate `<name>.pem` + `<name>.key` the CA signs. */
    make(name: string): void {
      openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", `/CN=${name} internal CA`, "-keyout", file(`${name}-ca.key`), "-out", file(`${name}-ca.pem`));
      openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", `/CN=${name} unit`, "-keyout", file(`${name}.key`), "-out", file(`${name}.csr`));
      writeFileSync(file(`${name}.ext`), "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n");
      openssl("x509", "-req", "-in", file(`${name}.csr`), "-CA", file(`${name}-ca.pem`), "-CAkey", file(`${name}-ca.key`), "-CAcreateserial", "-days", "2", "-extfile", file(`${name}.ext`), "-out", file(`${name}.pem`));
    },
    /** The GRPC_TLS_* variables of unit certificate `name`, trusting CA `ca` (the same PKI unless told). */
    env: (name: string, ca = name) => ({ GRPC_TLS_CA_FILE: file(`${ca}-ca.pem`), GRPC_TLS_CERT_FILE: file(`${name}.pem`), GRPC_TLS_KEY_FILE: file(`${name}.key`) }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
