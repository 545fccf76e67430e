/**
 * The deployment descriptors against the code that reads them: every unit's configuration loads
 * from the environment deploy/k8s and deploy/compose give it (a unit refusing its configuration
 * never starts), no unit is left calling a peer at its own 127.0.0.1, and every unit that serves or
 * calls RPC gets its own mutual-TLS certificate (cert-manager's in deploy/k8s, deploy/pki's in
 * compose). Neither Kubernetes nor Docker runs here, so this is what checks them.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import yaml from "js-yaml";
import { bindHost, loadConfig, loadDataKeys, loadGrpcTls, loadNatsAuth, serviceConfigShape } from "@pgw/kit";
import { loadGatewayConfig } from "../gateway/src/config";
import { CONFIRM_TIMEOUT_MS } from "../gateway/src/routes/confirm-payment";
import { loadNotifierConfig } from "../services/notifier/src/config";
import { loadOperationsConfig } from "../services/operations/src/config";
import { loadReceiptsConfig } from "../services/receipts/src/config";
import { loadRoutingConfig } from "../services/routing/src/config";
import { UNITS } from "../deploy/local/src/units";

const ROOT = path.join(__dirname, "..");
const read = (file: string) => yaml.safeLoadAll(fs.readFileSync(path.join(ROOT, file), "utf8")) as any[];

/** Each unit's loaders, as its main runs them (services: the kit's shape plus the unit's own). */
const LOADERS: Record<string, (env: NodeJS.ProcessEnv) => unknown> = {
  operations: (env) => [loadConfig(serviceConfigShape(50051, 9091), env), loadOperationsConfig(env), loadDataKeys(env)],
  routing: (env) => [loadConfig(serviceConfigShape(50052, 9092), env), loadRoutingConfig(env), loadDataKeys(env)],
  ledger: (env) => loadConfig(serviceConfigShape(50053, 9093), env),
  receipts: (env) => [loadConfig(serviceConfigShape(50054, 9094), env), loadReceiptsConfig(env)],
  notifier: (env) => [loadConfig(serviceConfigShape(50055, 9095), env), loadNotifierConfig(env), loadDataKeys(env)],
  gateway: (env) => loadGatewayConfig(env),
};

/** Variables naming another unit (or the provider, or where providers call back). */
const PEER_VARIABLES = ["OPERATIONS_URL", "ROUTING_URL", "LEDGER_URL", "RECEIPTS_URL", "NOTIFIER_URL", "SANDBOX_URL", "CALLBACK_BASE_URL"];
/** What the image runs for a unit: its bundle, as `pnpm build` writes it beside the unit's sources. */
const bundleOf = (unit: string) => UNITS.find((u) => u.name === unit)?.entry.replace(/src\/main\.ts$/, "dist/main.js");

const isLoopback = (url: string) => ["127.0.0.1", "localhost", "::1"].includes(new URL(url).hostname);

/** The units that serve or call RPC, each with a certificate of its own (not the provider sandbox, plain HTTP). */
const RPC_UNITS = Object.keys(LOADERS);
const TLS_VARIABLES = ["GRPC_TLS_CA_FILE", "GRPC_TLS_CERT_FILE", "GRPC_TLS_KEY_FILE"] as const;
/** The files deploy/pki/dev-certs.sh writes for a unit, in the order of TLS_VARIABLES. */
const devCertFiles = (unit: string) => ["ca.pem", `${unit}.pem`, `${unit}.key`];
/** The keys cert-manager writes into a Certificate's Secret, in the order of TLS_VARIABLES. */
const CERT_MANAGER_KEYS = ["ca.crt", "tls.crt", "tls.key"];

/** The users of deploy/nats/auth.conf, each with the server's variable holding its password. */
const natsUsers = new Map(
  [...fs.readFileSync(path.join(ROOT, "deploy/nats/auth.conf"), "utf8").matchAll(/user: ([\w-]+), password: \$(\w+)/g)].map((m) => [m[1], m[2]] as const),
);

describe("deploy/k8s", () => {
  const configMap = read("deploy/k8s/configmap.yaml")[0].data as Record<string, string>;
  const exampleSecrets = new Map<string, Record<string, string>>(read("deploy/k8s/secret.example.yaml").map((d) => [d.metadata.name, d.stringData]));
  const secrets = exampleSecrets.get("pgw-secrets")!;

  /** A container's environment: the ConfigMap and the Secrets it takes with envFrom, then its own env entries. */
  function environmentOf(container: any): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const from of container.envFrom ?? []) {
      if (from.configMapRef?.name === "pgw-config") Object.assign(env, configMap);
      const secret = from.secretRef?.name;
      if (secret !== undefined && !exampleSecrets.has(secret)) throw new Error(`${container.name}: takes Secret ${secret}, which secret.example.yaml does not show`);
      Object.assign(env, exampleSecrets.get(secret));
    }
    for (const e of container.env ?? []) {
      const key = e.valueFrom?.secretKeyRef?.key;
      if (key !== undefined && !(key in secrets)) throw new Error(`${container.name}: ${e.name} refers to ${key}, which pgw-secrets does not have`);
      env[e.name] = key !== undefined ? secrets[key] : e.value;
    }
    return env;
  }

  const deployments = Object.keys(LOADERS).map((unit) => {
    const deployment = read(`deploy/k8s/${unit}.yaml`).find((d) => d?.kind === "Deployment");
    return [unit, environmentOf(deployment.spec.template.spec.containers[0])] as const;
  });

  it.each(deployments)("%s loads its configuration from its Deployment (outside local mode)", (unit, env) => {
    expect(env.LOCAL_MODE).toBeUndefined();
    expect(() => LOADERS[unit](env)).not.toThrow();
    expect(bindHost(env)).toBe("0.0.0.0"); // reached through its Service, not on loopback
  });

  it.each(deployments)("%s takes from a Secret of its own the NATS user of deploy/nats/auth.conf named after it", (unit, env) => {
    expect(loadNatsAuth(env)).toEqual({ user: unit, pass: expect.any(String), token: undefined, creds: undefined });
    expect(natsUsers.has(unit)).toBe(true);
    expect(env.NATS_URL).not.toMatch(/@/); // credentials stay out of the ConfigMap
  });

  it("lets the longest call finish on shutdown, within every pod's grace period", () => {
    const grace = Number(configMap.SHUTDOWN_GRACE_MS);
    const gateway = loadGatewayConfig(Object.fromEntries(deployments)["gateway"]);
    expect(grace).toBeGreaterThanOrEqual(Math.max(CONFIRM_TIMEOUT_MS, gateway.CREATE_TIMEOUT_MS, gateway.CANCEL_TIMEOUT_MS));
    for (const unit of [...Object.keys(LOADERS), "provider-sandbox"]) {
      const pod = read(`deploy/k8s/${unit}.yaml`).find((d) => d?.kind === "Deployment").spec.template.spec;
      const preStopSeconds = Number(pod.containers[0].lifecycle.preStop.exec.command[1]);
      // preStop, then the calls in flight, then closing consumers, NATS and the pools.
      const enough = pod.terminationGracePeriodSeconds * 1000 >= preStopSeconds * 1000 + grace + 10_000;
      expect({ unit, enough }).toEqual({ unit, enough: true });
    }
  });

  it("routes provider callbacks to routing's Service, and signs them with the secret routing checks", () => {
    const routing = Object.fromEntries(deployments)["routing"];
    expect(routing.CALLBACK_BASE_URL).toBe("http://routing:9092");
    expect(loadRoutingConfig(routing).SEED_SANDBOX).toBe(true); // the base ships the sandbox, so it seeds its routes
    const sandbox = environmentOf(read("deploy/k8s/provider-sandbox.yaml").find((d) => d?.kind === "Deployment").spec.template.spec.containers[0]);
    expect(sandbox.CALLBACK_SECRET).toBe(routing.SANDBOX_CALLBACK_SECRET);
  });

  it("lets anyone outside the namespace reach only the gateway's public port and routing's callbacks, labelled pods the gRPC, admin and health ports, and names ports every service has", () => {
    expect(read("deploy/k8s/kustomization.yaml")[0].resources).toContain("network-policy.yaml");
    const policies = read("deploy/k8s/network-policy.yaml");
    const forServices = policies.find((p) => p.spec.podSelector.matchLabels?.["app.kubernetes.io/component"] === "service");
    const labelled = (label: string) => ({ namespaceSelector: {}, podSelector: { matchLabels: { [label]: "true" } } });
    expect(forServices.spec.ingress).toEqual([
      { from: [{ podSelector: {} }, labelled("pgw.example/grpc-client")], ports: [{ port: "grpc" }] },
      { from: [{ podSelector: {} }, labelled("pgw.example/metrics-scraper")], ports: [{ port: "health" }] },
    ]);
    // Every pod of the namespace is isolated; anyone reaches routing's callbacks (its health port).
    expect(policies.find((p) => p.metadata.name === "default-deny-ingress").spec).toEqual({ podSelector: {}, policyTypes: ["Ingress"] });
    expect(policies.find((p) => p.spec.podSelector.matchLabels?.["app.kubernetes.io/name"] === "routing").spec.ingress).toEqual([{ ports: [{ port: "health" }] }]);
    for (const unit of ["operations", "routing", "ledger", "receipts", "notifier"]) {
      const deployment = read(`deploy/k8s/${unit}.yaml`).find((d) => d?.kind === "Deployment");
      expect(deployment.spec.template.metadata.labels["app.kubernetes.io/component"]).toBe("service");
      expect(deployment.spec.template.spec.containers[0].ports.map((p: { name: string }) => p.name).sort()).toEqual(["grpc", "health"]);
    }
    const sandbox = read("deploy/k8s/provider-sandbox.yaml").find((d) => d?.kind === "Deployment");
    const forSandbox = policies.find((p) => p.spec.podSelector.matchLabels?.["app.kubernetes.io/component"] === sandbox.spec.template.metadata.labels["app.kubernetes.io/component"]);
    expect(forSandbox.spec.ingress).toEqual([{ from: [{ podSelector: {} }] }]);

    const gateway = read("deploy/k8s/gateway.yaml").find((d) => d?.kind === "Deployment");
    const forGateway = policies.find((p) => p.spec.podSelector.matchLabels?.["app.kubernetes.io/component"] === gateway.spec.template.metadata.labels["app.kubernetes.io/component"]);
    expect(forGateway.spec.ingress).toEqual([
      { ports: [{ port: "http" }] },
      { from: [{ podSelector: {} }, labelled("pgw.example/metrics-scraper")], ports: [{ port: "health" }] },
      { from: [labelled("pgw.example/admin-client")], ports: [{ port: "admin" }] },
    ]);
    expect(gateway.spec.template.spec.containers[0].ports.map((p: { name: string }) => p.name).sort()).toEqual(["admin", "health", "http"]);
  });

  it("runs in every container the bundle of the unit it names, as the build writes it", () => {
    const files = ["gateway", "operations", "routing", "ledger", "receipts", "notifier", "provider-sandbox", "migrate-job"];
    const containers = files.flatMap((file) => read(`deploy/k8s/${file}.yaml`).flatMap((d) => d?.spec?.template?.spec?.containers ?? []));
    expect(containers.length).toBe(12);
    for (const c of containers) expect([c.name, c.args]).toEqual([c.name, [bundleOf(c.name)]]);
  });

  describe("mutual TLS between the units", () => {
    const namespace = read("deploy/k8s/kustomization.yaml")[0].namespace as string;
    const certificates = read("deploy/k8s/certificates.yaml").filter((d) => d?.apiVersion === "cert-manager.io/v1");
    const issuers = new Map(certificates.filter((d) => d.kind === "Issuer").map((d) => [d.metadata.name, d.spec]));

    it("has cert-manager issue them: certificates.yaml is in the base, and the units' Issuer signs with a CA it issues", () => {
      expect(read("deploy/k8s/kustomization.yaml")[0].resources).toContain("certificates.yaml");
      const ca = certificates.find((d) => d.kind === "Certificate" && d.spec.isCA === true);
      expect(issuers.get(ca.spec.issuerRef.name)).toEqual({ selfSigned: {} });
      const unitIssuers = new Set(certificates.filter((d) => d.kind === "Certificate" && d !== ca).map((d) => d.spec.issuerRef.name));
      expect([...unitIssuers].map((name) => issuers.get(name))).toEqual([{ ca: { secretName: ca.spec.secretName } }]);
      // One certificate per RPC unit, and none for anything else.
      expect(certificates.filter((d) => d.kind === "Certificate" && d !== ca).map((d) => d.spec.secretName).sort()).toEqual(RPC_UNITS.map((u) => `pgw-tls-${u}`).sort());
    });

    it.each(RPC_UNITS)("%s reads its own certificate, key and CA from its Secret pgw-tls-<unit>, mounted read-only", (unit) => {
      const pod = read(`deploy/k8s/${unit}.yaml`).find((d) => d?.kind === "Deployment").spec.template.spec;
      const container = pod.containers[0];
      const env = environmentOf(container);
      const files = TLS_VARIABLES.map((name) => env[name]);
      expect(files.every((f) => typeof f === "string" && path.posix.isAbsolute(f))).toBe(true);
      for (const [i, file] of files.entries()) {
        // The Secret's keys are files at the mount's root (no items remapping them).
        const mount = (container.volumeMounts ?? []).find((m: any) => m.mountPath.replace(/\/$/, "") === path.posix.dirname(file!));
        const volume = pod.volumes.find((v: any) => v.name === mount?.name);
        expect([TLS_VARIABLES[i], mount?.readOnly, volume?.secret?.secretName, volume?.secret?.items, path.posix.basename(file!)]).toEqual([
          TLS_VARIABLES[i],
          true,
          `pgw-tls-${unit}`,
          undefined,
          CERT_MANAGER_KEYS[i],
        ]);
      }
    });

    it.each(RPC_UNITS)("%s has a Certificate for its identity and for the Service name its callers check", (unit) => {
      const certificate = certificates.find((d) => d.kind === "Certificate" && d.spec.secretName === `pgw-tls-${unit}`);
      expect(certificate).toBeDefined();
      const { spec } = certificate;
      expect(spec.uris).toEqual([`spiffe://pgw/unit/${unit}`]);
      const service = read(`deploy/k8s/${unit}.yaml`).find((d) => d?.kind === "Service").metadata.name;
      expect(spec.dnsNames).toEqual(expect.arrayContaining([service, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`]));
      // The host the other units call it at (pgw-config's peer URL) is one of them.
      const url = configMap[`${unit.toUpperCase()}_URL`];
      if (unit !== "gateway") expect(spec.dnsNames).toContain(new URL(url).hostname);
      expect(spec.usages).toEqual(expect.arrayContaining(["server auth", "client auth"]));
      expect(spec.privateKey.rotationPolicy).toBe("Always");
      expect(issuers.get(spec.issuerRef.name)?.ca).toBeDefined();
    });

    it("leaves the migration Job without certificates, which a run with MIGRATIONS=only does not need", () => {
      const pod = read("deploy/k8s/migrate-job.yaml")[0].spec.template.spec;
      for (const container of pod.containers) {
        const env = environmentOf(container);
        for (const name of TLS_VARIABLES) expect(env[name]).toBeUndefined();
        expect(loadGrpcTls(env)).toBeNull();
      }
      expect(pod.volumes?.some((v: any) => v.secret?.secretName?.startsWith("pgw-tls-")) ?? false).toBe(false);
    });
  });

  it("lets every container of the migration Job load its configuration and exit", () => {
    const job = read("deploy/k8s/migrate-job.yaml")[0];
    const containers = job.spec.template.spec.containers as any[];
    expect(containers.map((c) => c.name).sort()).toEqual(["ledger", "notifier", "operations", "receipts", "routing"]);
    for (const container of containers) {
      const env = environmentOf(container);
      expect(env.MIGRATIONS).toBe("only");
      expect(() => LOADERS[container.name](env)).not.toThrow();
    }
  });
});

describe("deploy/nats/helm-values.yaml", () => {
  const values = read("deploy/nats/helm-values.yaml")[0];

  it("gives the chart's servers every password variable auth.conf reads, and includes the auth.conf it mounts", () => {
    expect(Object.keys(values.container.env).sort()).toEqual([...natsUsers.values()].sort());
    const [mount] = values.container.patch.map((p: any) => p.value);
    expect(path.posix.join("/etc/nats-config", values.config.merge.$include)).toBe(`${mount.mountPath}/auth.conf`);
    expect(values.podTemplate.patch.map((p: any) => p.value)).toEqual([{ name: mount.name, configMap: { name: "pgw-nats-auth" } }]);
    expect(values.config.jetstream.merge.sync_interval).toBe("always");
  });
});

describe("deploy/compose", () => {
  const services = (read("deploy/compose/compose.yaml")[0].services ?? {}) as Record<string, any>;

  it.each(Object.keys(LOADERS))("%s loads its configuration and reaches its peers by service name", (unit) => {
    const env = services[unit].environment as NodeJS.ProcessEnv;
    expect(() => LOADERS[unit](env)).not.toThrow();
    for (const variable of PEER_VARIABLES) {
      if (env[variable] !== undefined) expect(isLoopback(env[variable]!)).toBe(false);
    }
    for (const variable of ["OPERATIONS_URL", "ROUTING_URL", "LEDGER_URL", "RECEIPTS_URL", "NOTIFIER_URL"]) expect(env[variable]).toBeDefined();
    // Local mode would listen on the container's loopback, where no peer reaches it.
    expect(bindHost(env)).toBe("0.0.0.0");
  });

  it("runs in every service the bundle of its unit, as the build writes it", () => {
    for (const unit of UNITS) expect([unit.name, services[unit.name].command]).toEqual([unit.name, [bundleOf(unit.name)]]);
  });

  it("runs NATS with deploy/nats, and gives each unit the user of auth.conf named after it with the password NATS expects", () => {
    const nats = services.nats;
    expect([nats.command, nats.volumes]).toEqual([["-c", "/etc/nats/nats-server.conf"], ["../nats:/etc/nats:ro", "nats-data:/data"]]);
    expect([...natsUsers.keys()].sort()).toEqual(Object.keys(LOADERS).sort());
    for (const unit of Object.keys(LOADERS)) {
      const auth = loadNatsAuth(services[unit].environment);
      expect([unit, auth.user, auth.pass]).toEqual([unit, unit, nats.environment[natsUsers.get(unit)!]]);
    }
  });

  it("gives routing a callback address the sandbox can reach", () => {
    expect(services.routing.environment.CALLBACK_BASE_URL).toBe("http://routing:9092");
  });

  /** A service's mounts, from the short (source:target[:ro]) or the long syntax. */
  const mountsOf = (service: any): { source: string; target: string; readOnly: boolean }[] =>
    (service.volumes ?? []).map((v: any) => {
      if (typeof v !== "string") return { source: v.source, target: v.target, readOnly: v.read_only === true };
      const [source, target, mode] = v.split(":");
      return { source, target, readOnly: mode === "ro" };
    });

  it.each(RPC_UNITS)("%s presents its own development certificate from the git-ignored folder dev-certs.sh fills", (unit) => {
    const env = services[unit].environment as NodeJS.ProcessEnv;
    const files = TLS_VARIABLES.map((name) => env[name]);
    expect(files.every((f) => typeof f === "string")).toBe(true);
    const folders = new Set(files.map((f) => path.posix.dirname(f!)));
    expect(folders.size).toBe(1);
    const mount = mountsOf(services[unit]).find((m) => m.target.replace(/\/$/, "") === [...folders][0]);
    expect(mount).toBeDefined();
    expect(mount!.readOnly).toBe(true);
    // Relative to compose.yaml: the folder of the README's `deploy/pki/dev-certs.sh deploy/compose/certs`.
    expect(path.relative(ROOT, path.join(ROOT, "deploy/compose", mount!.source))).toBe(path.join("deploy", "compose", "certs"));
    expect(files.map((f) => path.posix.basename(f!))).toEqual(devCertFiles(unit));
    expect(fs.readFileSync(path.join(ROOT, ".gitignore"), "utf8").split("\n")).toContain("deploy/compose/certs/");
  });
});

describe("deploy/pki/dev-certs.sh", () => {
  const TEAM = "risk-desk";
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "pgw-dev-certs-"));
    execFileSync(path.join(ROOT, "deploy/pki/dev-certs.sh"), [dir, TEAM], { stdio: "pipe" });
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A certificate's subjectAltName entries as openssl prints them (URI:..., DNS:..., IP Address:...). */
  const sans = (file: string) => {
    const text = execFileSync("openssl", ["x509", "-in", path.join(dir, file), "-noout", "-ext", "subjectAltName"], { encoding: "utf8" });
    return text.split("\n").slice(1).join(",").split(",").map((s) => s.trim()).filter(Boolean);
  };
  const verifies = (file: string) => execFileSync("openssl", ["verify", "-CAfile", path.join(dir, "ca.pem"), path.join(dir, file)], { encoding: "utf8" }).trim();

  it.each(RPC_UNITS)("gives %s its identity and its service name, signed by the CA", (unit) => {
    const names = sans(`${unit}.pem`);
    expect(names.filter((n) => n.startsWith("URI:"))).toEqual([`URI:spiffe://pgw/unit/${unit}`]);
    expect(names).toContain(`DNS:${unit}`);
    expect(verifies(`${unit}.pem`)).toBe(`${path.join(dir, `${unit}.pem`)}: OK`);
  });

  it("gives a team named on the command line its team identity, and nothing a unit would have", () => {
    expect(sans(`team-${TEAM}.pem`)).toEqual([`URI:spiffe://pgw/team/${TEAM}`]);
    expect(verifies(`team-${TEAM}.pem`)).toBe(`${path.join(dir, `team-${TEAM}.pem`)}: OK`);
  });

  it("writes the files compose's units name, and they load as a unit's TLS material", () => {
    const compose = read("deploy/compose/compose.yaml")[0].services as Record<string, any>;
    for (const unit of RPC_UNITS) {
      const env = compose[unit].environment as NodeJS.ProcessEnv;
      // Compose's paths inside the container, read from the folder the script filled.
      const here = Object.fromEntries(TLS_VARIABLES.map((name) => [name, path.join(dir, path.posix.basename(env[name]!))]));
      const tls = loadGrpcTls(here);
      expect([unit, tls?.cert.toString()]).toEqual([unit, fs.readFileSync(path.join(dir, `${unit}.pem`), "utf8")]);
    }
  });
});
