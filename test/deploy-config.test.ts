/**
 * The deployment descriptors against the code that reads them. Neither Kubernetes nor Docker runs
 * here, so this is what checks them.
 *
 * deploy/k8s (the kustomize base) and deploy/k8s-overlays/production are checked as rendered, the
 * way `kubectl apply -k` would send them. The render is this file's `kustomize()`: a small
 * implementation, over js-yaml, of the part of kustomize these kustomizations use (resources,
 * namespace, labels, images, strategic-merge patches), which throws on any field or patch it does
 * not implement rather than skip it. No kustomize comes from the npm registry or Debian in a usable
 * version (Debian's kubernetes-client is kubectl 1.20, whose kustomize v2 rejects the base's
 * `labels`), so the project cannot install one; where a kustomize v5 is on the PATH (`kustomize`,
 * or `kubectl kustomize`), the first test compares this render with its output, object by object.
 *
 * On every Deployment of both renders: the unit's configuration loads from the environment its
 * manifests give it (a unit refusing its configuration never starts) and every variable of its own
 * `env` is one it reads; its probes ask /livez and /readyz on the port it answers them on; requests
 * and limits; non-root (the Dockerfile's uid), read-only root filesystem, no capabilities; a
 * PodDisruptionBudget; NetworkPolicies that let anyone outside the namespace reach only the
 * gateway's public port and routing's callback port; a PodMonitor scraping every unit's health port. The production overlay: autoscalers, NATS
 * stream replicas matching deploy/nats/helm-values.yaml's cluster, no sandbox, the Postgres it
 * expects. Compose: the same variables as the manifests but for listed differences, peers by
 * service name. Everywhere: no unit is left calling a peer at its own 127.0.0.1, and every unit
 * that serves or calls RPC gets its own mutual-TLS certificate (cert-manager's in deploy/k8s,
 * deploy/pki's in compose).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import yaml from "js-yaml";
import { loadDataKeys } from "@pgw/kit/db";
import { loadNatsAuth } from "@pgw/kit/events";
import { probeHandler, type ProbeState } from "@pgw/kit/http";
import { loadGrpcTls } from "@pgw/kit/rpc";
import { bindHost, loadConfig, serviceConfigShape } from "@pgw/kit/runtime";
import { loadGatewayConfig } from "../gateway/src/config";
import { CONFIRM_TIMEOUT_MS } from "../gateway/src/routes/confirm-payment";
import { loadNotifierConfig } from "../services/notifier/src/config";
import { loadOperationsConfig } from "../services/operations/src/config";
import { loadSandboxConfig } from "../services/provider-sandbox/src/config";
import { loadReceiptsConfig } from "../services/receipts/src/config";
import { loadRoutingConfig } from "../services/routing/src/config";
import { UNITS } from "../deploy/local/src/units";

const ROOT = path.join(__dirname, "..");
const read = (file: string) => yaml.safeLoadAll(fs.readFileSync(path.join(ROOT, file), "utf8")) as any[];

/** The gRPC and health ports each service's main passes to the kit (its defaults). */
const SERVICE_PORTS: Record<string, [grpc: number, health: number]> = {
  operations: [50051, 9091],
  routing: [50052, 9092],
  ledger: [50053, 9093],
  receipts: [50054, 9094],
  notifier: [50055, 9095],
};
const serviceConfig = (unit: string, env: NodeJS.ProcessEnv) => loadConfig(serviceConfigShape(...SERVICE_PORTS[unit]), env);

/** Each unit's loaders, as its main runs them (services: the kit's shape plus the unit's own). */
const LOADERS: Record<string, (env: NodeJS.ProcessEnv) => unknown> = {
  operations: (env) => [serviceConfig("operations", env), loadOperationsConfig(env), loadDataKeys(env)],
  routing: (env) => [serviceConfig("routing", env), loadRoutingConfig(env), loadDataKeys(env)],
  ledger: (env) => serviceConfig("ledger", env),
  receipts: (env) => [serviceConfig("receipts", env), loadReceiptsConfig(env)],
  notifier: (env) => [serviceConfig("notifier", env), loadNotifierConfig(env), loadDataKeys(env)],
  gateway: (env) => loadGatewayConfig(env),
};
/** Any unit's configuration, the provider sandbox's included. */
const loadUnit = (unit: string, env: NodeJS.ProcessEnv) => (unit === "provider-sandbox" ? loadSandboxConfig(env) : LOADERS[unit](env));

/** The port a unit answers /livez and /readyz on, as its configuration reads it from `env`. */
function probePortOf(unit: string, env: NodeJS.ProcessEnv): number {
  if (unit === "gateway") return loadGatewayConfig(env).HEALTH_PORT;
  if (unit === "provider-sandbox") return loadSandboxConfig(env).HTTP_PORT; // one port for everything
  return serviceConfig(unit, env).HEALTH_PORT;
}

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

/**
 * The variables a unit reads: every name its loaders look up (recorded through a proxy of `env`),
 * with the mutual-TLS files (read by name, then as files) and TMPDIR (Node's os.tmpdir()).
 */
function variablesRead(unit: string, env: NodeJS.ProcessEnv): Set<string> {
  const names = new Set<string>(["TMPDIR"]);
  const recording = new Proxy(env, {
    get: (target, name) => {
      if (typeof name === "string") names.add(name);
      return Reflect.get(target, name);
    },
  });
  loadUnit(unit, recording);
  bindHost(recording);
  if (unit !== "provider-sandbox") {
    loadNatsAuth(recording);
    for (const name of TLS_VARIABLES) names.add(name);
  }
  return names;
}

/** The users of deploy/nats/auth.conf, each with the server's variable holding its password. */
const natsUsers = new Map(
  [...fs.readFileSync(path.join(ROOT, "deploy/nats/auth.conf"), "utf8").matchAll(/user: ([\w-]+), password: \$(\w+)/g)].map((m) => [m[1], m[2]] as const),
);

// ---- kustomize, as far as deploy/k8s and its overlay use it ----------------------------------------

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; [field: string]: any };

const KUSTOMIZATION_FIELDS = new Set(["apiVersion", "kind", "namespace", "labels", "resources", "images", "patches"]);
const CLUSTER_SCOPED = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding", "ClusterIssuer", "CustomResourceDefinition", "PriorityClass", "StorageClass"]);
/** Kinds whose pod template kustomize's `labels` reach with includeTemplates. */
const POD_TEMPLATE_KINDS = new Set(["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"]);
/** The merge key of each list a strategic-merge patch may reach here (Kubernetes' patchMergeKey). */
const MERGE_KEYS: Record<string, string> = { containers: "name", initContainers: "name", env: "name", volumes: "name", volumeMounts: "mountPath" };

const isMap = (value: unknown): value is Record<string, any> => typeof value === "object" && value !== null && !Array.isArray(value);
const groupOf = (apiVersion: string) => (apiVersion.includes("/") ? apiVersion.split("/")[0] : "");
const idOf = (d: Manifest) => `${groupOf(d.apiVersion)}/${d.kind}/${d.metadata.namespace ?? ""}/${d.metadata.name}`;

/** A strategic-merge patch of `target` by `patch`: maps merge, null deletes, lists in MERGE_KEYS merge by key. */
function strategicMerge(target: any, patch: any, where: string): any {
  if (!isMap(patch) || !isMap(target)) return patch;
  const merged: Record<string, any> = { ...target };
  for (const [field, value] of Object.entries(patch)) {
    if (field.startsWith("$")) throw new Error(`${where}: directive ${field} is not implemented here`);
    if (value === null) delete merged[field];
    else if (Array.isArray(value)) {
      // As kustomize orders the result: the patch's items first, in its order, then the others.
      const key = MERGE_KEYS[field];
      if (key === undefined) throw new Error(`${where}: how kustomize merges list ${field} is not implemented here`);
      const existing: any[] = merged[field] ?? [];
      const patched: any[] = [];
      for (const { $patch, ...item } of value) {
        if ($patch !== undefined && $patch !== "delete") throw new Error(`${where}: $patch ${$patch} is not implemented here`);
        const old = existing.find((e) => e[key] === item[key]);
        if ($patch === undefined) patched.push(old === undefined ? item : strategicMerge(old, item, where));
      }
      const named = new Set(value.map((item: any) => item[key]));
      merged[field] = [...patched, ...existing.filter((e) => !named.has(e[key]))];
    } else merged[field] = strategicMerge(merged[field], value, where);
  }
  return merged;
}

/** Renders the kustomization in `dir` (relative to the repository) as `kustomize build` does. */
function kustomize(dir: string): Manifest[] {
  const where = path.join(dir, "kustomization.yaml");
  const k = yaml.safeLoad(fs.readFileSync(path.join(ROOT, where), "utf8")) as any;
  const unknown = Object.keys(k).filter((field) => !KUSTOMIZATION_FIELDS.has(field));
  if (unknown.length > 0) throw new Error(`${where}: ${unknown.join(", ")} not implemented here`);

  let docs: Manifest[] = (k.resources ?? []).flatMap((resource: string) => {
    const file = path.join(dir, resource);
    if (fs.statSync(path.join(ROOT, file)).isDirectory()) return kustomize(file);
    return read(file).filter((d) => d !== null && d !== undefined);
  });
  const ids = docs.map(idOf);
  const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
  if (twice.length > 0) throw new Error(`${where}: ${twice.join(", ")} defined twice`);

  for (const entry of k.patches ?? []) {
    const { path: file, ...options } = entry;
    if (file === undefined || Object.keys(options).length > 0) throw new Error(`${where}: only patches given by path are implemented here`);
    const patches = read(path.join(dir, file));
    // kustomize 5.5 crashes on a file of several deleting patches: one patch per file.
    if (patches.length !== 1) throw new Error(`${where}: ${file} must hold exactly one patch`);
    const [patch] = patches as Manifest[];
    const matches = docs.filter(
      (d) =>
        d.kind === patch.kind &&
        groupOf(d.apiVersion) === groupOf(patch.apiVersion) &&
        d.metadata.name === patch.metadata.name &&
        (patch.metadata.namespace === undefined || d.metadata.namespace === patch.metadata.namespace),
    );
    if (matches.length !== 1) throw new Error(`${where}: ${file} matches ${matches.length} objects`);
    const { $patch, ...body } = patch as any;
    if ($patch === "delete") docs = docs.filter((d) => d !== matches[0]);
    else if ($patch !== undefined) throw new Error(`${where}: $patch ${$patch} is not implemented here`);
    else docs = docs.map((d) => (d === matches[0] ? strategicMerge(d, body, `${dir}/${file}`) : d));
  }

  if (k.namespace !== undefined) {
    for (const d of docs) if (!CLUSTER_SCOPED.has(d.kind)) d.metadata = { ...d.metadata, namespace: k.namespace };
  }
  for (const { pairs, includeSelectors = false, includeTemplates = false, ...rest } of k.labels ?? []) {
    if (includeSelectors !== false || Object.keys(rest).length > 0) throw new Error(`${where}: labels with selectors or ${Object.keys(rest)} not implemented here`);
    for (const d of docs) {
      d.metadata = { ...d.metadata, labels: { ...d.metadata.labels, ...pairs } };
      if (includeTemplates && POD_TEMPLATE_KINDS.has(d.kind)) {
        const template = d.spec.template;
        template.metadata = { ...template.metadata, labels: { ...template.metadata?.labels, ...pairs } };
      }
    }
  }
  for (const { name, newName, newTag, ...rest } of k.images ?? []) {
    if (Object.keys(rest).length > 0) throw new Error(`${where}: images' ${Object.keys(rest)} not implemented here`);
    for (const d of docs) {
      const spec = d.spec?.template?.spec ?? d.spec?.jobTemplate?.spec?.template?.spec;
      for (const c of [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])]) {
        const [, image, tag] = /^(.*?)(?::([^:/]+))?$/.exec(c.image)!;
        const newTagOrOld = newTag ?? tag;
        if (image === name) c.image = `${newName ?? name}${newTagOrOld === undefined ? "" : `:${newTagOrOld}`}`;
      }
    }
  }
  // Each object its own copy: a test that changes one changes nothing else.
  return JSON.parse(JSON.stringify(docs));
}

/** A kustomize v5 on this machine's PATH, if any (standalone, or kubectl's built-in). */
function installedKustomize(): { name: string; build: (dir: string) => Manifest[] } | undefined {
  const output = (command: string, args: string[]) => {
    try {
      return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 60_000 });
    } catch {
      return undefined;
    }
  };
  const build = (command: string, args: string[]) => (dir: string) =>
    (yaml.safeLoadAll(execFileSync(command, [...args, path.join(ROOT, dir)], { encoding: "utf8", timeout: 60_000 })) as Manifest[]).filter((d) => d !== null);
  const standalone = output("kustomize", ["version"])?.trim();
  if (standalone !== undefined && /^v?5\./.test(standalone)) return { name: `kustomize ${standalone}`, build: build("kustomize", ["build"]) };
  const kubectl = output("kubectl", ["version", "--client", "-o", "json"]);
  const version = kubectl === undefined ? undefined : (JSON.parse(kubectl).kustomizeVersion as string | undefined);
  if (version !== undefined && /^v5\./.test(version)) return { name: `kubectl kustomize (${version})`, build: build("kubectl", ["kustomize"]) };
  return undefined;
}

/** The kustomizations, each rendered. */
const KUSTOMIZATIONS = { base: "deploy/k8s", production: "deploy/k8s-overlays/production" } as const;
type RenderName = keyof typeof KUSTOMIZATIONS;
const RENDERS: Record<RenderName, Manifest[]> = { base: kustomize(KUSTOMIZATIONS.base), production: kustomize(KUSTOMIZATIONS.production) };

const ofKind = (docs: Manifest[], kind: string) => docs.filter((d) => d.kind === kind);
const deploymentOf = (render: RenderName, unit: string) => ofKind(RENDERS[render], "Deployment").find((d) => d.metadata.name === unit)!;
const configMapOf = (render: RenderName) => ofKind(RENDERS[render], "ConfigMap").find((d) => d.metadata.name === "pgw-config")!.data as Record<string, string>;
/** Every Deployment of every render, as [render, unit]. */
const DEPLOYMENTS = (Object.keys(RENDERS) as RenderName[]).flatMap((render) => ofKind(RENDERS[render], "Deployment").map((d) => [render, d.metadata.name] as [RenderName, string]));
/** The autoscaler targeting a Deployment, if any. */
const autoscalerOf = (render: RenderName, unit: string) =>
  ofKind(RENDERS[render], "HorizontalPodAutoscaler").find((h) => h.spec.scaleTargetRef.kind === "Deployment" && h.spec.scaleTargetRef.name === unit);

const exampleSecrets = new Map<string, Record<string, string>>(read("deploy/k8s/secret.example.yaml").map((d) => [d.metadata.name, d.stringData]));
const secrets = exampleSecrets.get("pgw-secrets")!;

/** A container's environment: the ConfigMap and the Secrets it takes with envFrom, then its own env entries. */
function environmentOf(container: any, configMap: Record<string, string>): NodeJS.ProcessEnv {
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
/** The environment of a unit's container in a render. */
const unitEnvironment = (render: RenderName, unit: string) => environmentOf(deploymentOf(render, unit).spec.template.spec.containers[0], configMapOf(render));

// ---- NetworkPolicy, as the cluster applies it -------------------------------------------------------

/** True when `selector` (matchLabels only; anything else is not implemented here) selects `labels`. */
function selects(selector: any, labels: Record<string, string>): boolean {
  const { matchLabels = {}, ...rest } = selector ?? {};
  if (Object.keys(rest).length > 0) throw new Error(`selector ${JSON.stringify(selector)} not implemented here`);
  return Object.entries(matchLabels).every(([k, v]) => labels[k] === v);
}
const labelsText = (selector: any) => Object.entries(selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`).join(",");

/** Who a NetworkPolicy peer admits, in words; "namespace" ones are pods of the policy's own namespace. */
function describePeer(peer: any): string {
  if (peer.ipBlock !== undefined) return `addresses ${peer.ipBlock.cidr}`;
  const pods = labelsText(peer.podSelector);
  if (peer.namespaceSelector === undefined) return pods === "" ? "namespace pods" : `namespace pods labelled ${pods}`;
  const namespaces = labelsText(peer.namespaceSelector);
  if (namespaces !== "") throw new Error(`namespaceSelector ${namespaces}: not implemented here`);
  return pods === "" ? "anyone in the cluster" : `pods labelled ${pods}`;
}

/** Who may open connections to `port` (name and number) of a pod with `labels` in `namespace`, by the policies in `docs`. */
function admittedTo(docs: Manifest[], namespace: string, labels: Record<string, string>, port: { name?: string; containerPort: number }): string[] {
  const policies = ofKind(docs, "NetworkPolicy").filter(
    (p) => p.metadata.namespace === namespace && (p.spec.policyTypes ?? ["Ingress"]).includes("Ingress") && selects(p.spec.podSelector, labels),
  );
  if (policies.length === 0) return ["anyone"]; // not isolated
  const sources = new Set<string>();
  for (const rule of policies.flatMap((p) => p.spec.ingress ?? [])) {
    const ports = rule.ports ?? [];
    const matches = (p: any) => (p.protocol ?? "TCP") === "TCP" && (p.port === undefined || p.port === port.name || p.port === port.containerPort);
    if (ports.length > 0 && !ports.some(matches)) continue;
    const from = rule.from ?? [];
    if (from.length === 0) sources.add("anyone");
    for (const peer of from) sources.add(describePeer(peer));
  }
  return [...sources].sort();
}

/**
 * Who from outside the namespace may reach each port, and why. Every port not listed takes pods of
 * the namespace at most (network-policy.yaml's comment).
 */
const LABELLED = (label: string) => `pods labelled ${label}=true`;
const FROM_OUTSIDE: Record<string, { sources: string[]; why: string }> = {
  "gateway/http": { sources: ["anyone"], why: "the public API and checkout: the Ingress controller, in its own namespace, forwards to it" },
  "routing/health": { sources: ["anyone"], why: "providers' status callbacks, POST /callbacks/<provider> on routing's health port, through a public route" },
  "gateway/admin": { sources: [LABELLED("pgw.example/admin-client")], why: "the operators' tooling, by label only" },
  "*/grpc": { sources: [LABELLED("pgw.example/grpc-client")], why: "internal teams' callers, by label (and their team certificate)" },
  "*/health": { sources: [LABELLED("pgw.example/metrics-scraper")], why: "Prometheus, by label" },
};

/** CPU in cores, memory in bytes, from a Kubernetes quantity. */
function quantity(value: string | number): number {
  const m = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(value));
  if (m === null) throw new Error(`quantity ${value}: not understood here`);
  const factors: Record<string, number> = { "": 1, m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Number(m[1]) * factors[m[2] ?? ""];
}

/** The user the image runs as: the last USER of deploy/Dockerfile's last stage, as uid and gid. */
function imageUser(): { uid?: string; gid?: string } {
  const lines = fs
    .readFileSync(path.join(ROOT, "deploy/Dockerfile"), "utf8")
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  let lastStage = 0;
  lines.forEach((line, i) => {
    if (/^FROM\s/i.test(line)) lastStage = i;
  });
  const users = lines.slice(lastStage).filter((line) => /^USER\s/i.test(line));
  const [uid, gid] = (users[users.length - 1]?.split(/\s+/)[1] ?? "").split(":");
  return { uid: uid || undefined, gid };
}

const composeServices = (read("deploy/compose/compose.yaml")[0].services ?? {}) as Record<string, any>;

describe("deploy/k8s and deploy/k8s-overlays/production, rendered", () => {
  const installed = installedKustomize();
  const renderNames = Object.keys(KUSTOMIZATIONS) as RenderName[];
  const sorted = (docs: Manifest[]) => [...docs].sort((a, b) => (idOf(a) < idOf(b) ? -1 : 1));

  (installed ? it.each(renderNames) : it.skip.each(renderNames))(
    `%s renders here as ${installed?.name ?? "a kustomize v5 would (none on this machine's PATH)"} renders it`,
    (render) => {
      expect(sorted(RENDERS[render])).toEqual(sorted(installed!.build(KUSTOMIZATIONS[render])));
    },
  );

  it.each(renderNames)("%s puts every object in namespace pgw, labelled part of pgw, and every container on the pinned image", (render) => {
    const base = read("deploy/k8s/kustomization.yaml")[0];
    for (const d of RENDERS[render]) {
      expect([idOf(d), d.metadata.namespace, d.metadata.labels?.["app.kubernetes.io/part-of"]]).toEqual([idOf(d), CLUSTER_SCOPED.has(d.kind) ? undefined : base.namespace, "pgw"]);
    }
    const [{ newName, newTag }] = base.images;
    const images = ofKind(RENDERS[render], "Deployment").flatMap((d) => d.spec.template.spec.containers.map((c: any) => c.image));
    expect(new Set(images)).toEqual(new Set([`${newName}:${newTag}`]));
  });

  it.each(DEPLOYMENTS)("%s: %s loads its configuration from its Deployment (outside local mode)", (render, unit) => {
    const env = unitEnvironment(render, unit);
    expect(env.LOCAL_MODE).toBeUndefined();
    expect(() => loadUnit(unit, env)).not.toThrow();
    expect(bindHost(env)).toBe("0.0.0.0"); // reached through its Service, not on loopback
  });

  it.each(DEPLOYMENTS)("%s: %s sets in its own env only variables it reads", (render, unit) => {
    const container = deploymentOf(render, unit).spec.template.spec.containers[0];
    const reads = variablesRead(unit, unitEnvironment(render, unit));
    expect(container.env.map((e: { name: string }) => e.name).filter((name: string) => !reads.has(name))).toEqual([]);
  });

  it.each(DEPLOYMENTS)("%s: %s probes /livez (startup, liveness) and /readyz (readiness) on the port its configuration answers them on", (render, unit) => {
    const container = deploymentOf(render, unit).spec.template.spec.containers[0];
    const port = probePortOf(unit, unitEnvironment(render, unit));
    const portNumber = (p: string | number) => (typeof p === "number" ? p : container.ports.find((q: any) => q.name === p)?.containerPort);
    const probe = (kind: string) => container[kind] && { path: container[kind].httpGet?.path, port: portNumber(container[kind].httpGet?.port) };
    expect({ startup: probe("startupProbe"), liveness: probe("livenessProbe"), readiness: probe("readinessProbe") }).toEqual({
      startup: { path: "/livez", port },
      liveness: { path: "/livez", port },
      readiness: { path: "/readyz", port },
    });
  });

  it("probes paths every unit answers: /livez while the process runs, /readyz once its checks pass (the kit's probe handler)", async () => {
    const state: ProbeState = { accepting: true, checks: { database: async () => false } };
    const handle = probeHandler(state);
    const server = http.createServer((req, res) => void handle(req, res).then((handled) => handled || res.writeHead(404).end()));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const status = async (p: string) => (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${p}`)).status;
      expect([await status("/livez"), await status("/readyz")]).toEqual([204, 503]);
      state.checks.database = async () => true;
      expect([await status("/livez"), await status("/readyz")]).toEqual([204, 204]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it.each(DEPLOYMENTS)("%s: %s requests and limits CPU and memory in every container, each request within its limit", (render, unit) => {
    for (const c of deploymentOf(render, unit).spec.template.spec.containers) {
      const { requests = {}, limits = {} } = c.resources ?? {};
      for (const resource of ["cpu", "memory"]) {
        const set = [requests[resource], limits[resource]].every((q) => q !== undefined);
        expect([c.name, resource, set, set && quantity(requests[resource]) <= quantity(limits[resource])]).toEqual([c.name, resource, true, true]);
      }
    }
  });

  it.each(DEPLOYMENTS)("%s: %s runs non-root, read-only, without capabilities, privileges or the host's namespaces", (render, unit) => {
    const pod = deploymentOf(render, unit).spec.template.spec;
    const context = pod.securityContext ?? {};
    expect({
      runAsNonRoot: context.runAsNonRoot,
      nonRootUid: Number.isInteger(context.runAsUser) && context.runAsUser > 0,
      seccomp: context.seccompProfile?.type,
      serviceAccountToken: pod.automountServiceAccountToken,
      host: [pod.hostNetwork, pod.hostPID, pod.hostIPC].some(Boolean),
      hostPaths: (pod.volumes ?? []).filter((v: any) => v.hostPath !== undefined).length,
    }).toEqual({ runAsNonRoot: true, nonRootUid: true, seccomp: "RuntimeDefault", serviceAccountToken: false, host: false, hostPaths: 0 });
    for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
      const own = c.securityContext ?? {};
      expect({
        container: c.name,
        readOnlyRootFilesystem: own.readOnlyRootFilesystem,
        allowPrivilegeEscalation: own.allowPrivilegeEscalation,
        privileged: own.privileged ?? false,
        drop: own.capabilities?.drop,
        add: own.capabilities?.add ?? [],
        runAsUser: own.runAsUser ?? context.runAsUser,
      }).toEqual({ container: c.name, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, privileged: false, drop: ["ALL"], add: [], runAsUser: context.runAsUser });
    }
  });

  /** Deployments without a PodDisruptionBudget, each with why. */
  const WITHOUT_PDB: Record<string, string> = {
    "provider-sandbox": "one replica of a test fixture: a budget would block every node drain (minAvailable 1) or protect nothing; production drops it",
  };

  it.each(DEPLOYMENTS)("%s: %s keeps serving through voluntary disruptions: 2 replicas or more and a PodDisruptionBudget that lets nodes drain, unless listed without", (render, unit) => {
    const deployment = deploymentOf(render, unit);
    const replicas = autoscalerOf(render, unit)?.spec.minReplicas ?? deployment.spec.replicas ?? 1;
    const labels = deployment.spec.template.metadata.labels;
    const budgets = ofKind(RENDERS[render], "PodDisruptionBudget").filter((p) => p.metadata.namespace === deployment.metadata.namespace && selects(p.spec.selector, labels));
    if (unit in WITHOUT_PDB) {
      expect([replicas, budgets.length]).toEqual([1, 0]);
      return;
    }
    expect([replicas >= 2, budgets.length]).toEqual([true, 1]);
    const [budget] = budgets;
    for (const other of ofKind(RENDERS[render], "Deployment").filter((d) => d !== deployment)) {
      expect([other.metadata.name, selects(budget.spec.selector, other.spec.template.metadata.labels)]).toEqual([other.metadata.name, false]);
    }
    const required = budget.spec.minAvailable ?? replicas - budget.spec.maxUnavailable;
    expect([Number.isInteger(required), required >= 1, required < replicas]).toEqual([true, true, true]);
  });

  it.each(renderNames)("%s lets anyone outside the namespace reach only the gateway's public port and routing's callback port, and labelled pods what their label is for", (render) => {
    const docs = RENDERS[render];
    const reachable: Record<string, string[]> = {};
    const expected: Record<string, string[]> = {};
    for (const d of ofKind(docs, "Deployment")) {
      for (const port of d.spec.template.spec.containers.flatMap((c: any) => c.ports ?? [])) {
        const key = `${d.metadata.name}/${port.name}`;
        const outside = admittedTo(docs, d.metadata.namespace!, d.spec.template.metadata.labels, port).filter((s) => !s.startsWith("namespace pods"));
        reachable[key] = outside.includes("anyone") ? ["anyone"] : outside;
        expected[key] = (FROM_OUTSIDE[key] ?? FROM_OUTSIDE[`*/${port.name}`])?.sources ?? [];
      }
    }
    expect(reachable).toEqual(expected);
    // The two open ports are the gateway's public port and the port routing serves callbacks on: its health port (services/routing/src/main.ts).
    expect(Object.keys(reachable).filter((key) => reachable[key].includes("anyone")).sort()).toEqual(["gateway/http", "routing/health"]);
    const portOf = (unit: string, name: string) => deploymentOf(render, unit).spec.template.spec.containers[0].ports.find((p: any) => p.name === name).containerPort;
    expect(portOf("gateway", "http")).toBe(loadGatewayConfig(unitEnvironment(render, "gateway")).HTTP_PORT);
    expect(portOf("routing", "health")).toBe(probePortOf("routing", unitEnvironment(render, "routing")));
    // And nothing leaves the cluster network by itself: no LoadBalancer or NodePort Service, no Ingress.
    expect(ofKind(docs, "Service").filter((s) => (s.spec.type ?? "ClusterIP") !== "ClusterIP").map(idOf)).toEqual([]);
    expect(ofKind(docs, "Ingress").map(idOf)).toEqual([]);
  });
});

describe("deploy/k8s-overlays/production", () => {
  const dir = KUSTOMIZATIONS.production;
  const docs = RENDERS.production;

  it("autoscales the gateway and operations on CPU from 2 replicas, and leaves their replica count to the autoscalers", () => {
    const autoscalers = ofKind(docs, "HorizontalPodAutoscaler");
    expect(autoscalers.map((h) => h.spec.scaleTargetRef.name).sort()).toEqual(["gateway", "operations"]);
    for (const hpa of autoscalers) {
      const { scaleTargetRef, minReplicas, maxReplicas, metrics } = hpa.spec;
      const target = ofKind(docs, "Deployment").find((d) => d.metadata.name === scaleTargetRef.name && d.metadata.namespace === hpa.metadata.namespace);
      expect({ apiVersion: hpa.apiVersion, target: [scaleTargetRef.apiVersion, scaleTargetRef.kind], found: target !== undefined, replicas: target?.spec.replicas }).toEqual({
        apiVersion: "autoscaling/v2",
        target: ["apps/v1", "Deployment"],
        found: true,
        replicas: undefined, // `kubectl apply` would otherwise reset the autoscaler's count on every rollout
      });
      expect([minReplicas >= 2, maxReplicas > minReplicas]).toEqual([true, true]);
      expect(metrics).toEqual([{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: expect.any(Number) } } }]);
      // Utilization is measured against the containers' CPU requests.
      for (const c of target!.spec.template.spec.containers) expect([c.name, c.resources?.requests?.cpu !== undefined]).toEqual([c.name, true]);
    }
  });

  it("keeps 3 copies of stream PGW, on deploy/nats/helm-values.yaml's cluster of 3 servers that sync every write", () => {
    for (const unit of Object.keys(SERVICE_PORTS)) expect([unit, serviceConfig(unit, unitEnvironment("production", unit)).NATS_STREAM_REPLICAS]).toEqual([unit, 3]);
    const { config } = read("deploy/nats/helm-values.yaml")[0];
    expect({ cluster: config.cluster.enabled, servers: config.cluster.replicas, jetstream: config.jetstream.enabled, sync: config.jetstream.merge.sync_interval }).toEqual({
      cluster: true,
      servers: 3,
      jetstream: true,
      sync: "always",
    });
    // The Service the chart's release `nats` in namespace nats creates (helm-values.yaml's comment).
    expect(new URL(configMapOf("production").NATS_URL).hostname).toBe("nats.nats.svc.cluster.local");
  });

  it("ships no provider sandbox and seeds none, and has providers call back at a public https address", () => {
    expect(docs.filter((d) => JSON.stringify(d).includes("provider-sandbox") || d.spec?.podSelector?.matchLabels?.["app.kubernetes.io/component"] === "sandbox").map(idOf)).toEqual([]);
    const routing = loadRoutingConfig(unitEnvironment("production", "routing"));
    expect(routing.SEED_SANDBOX).toBe(false);
    expect(new URL(routing.CALLBACK_BASE_URL!).protocol).toBe("https:");
  });

  it("documents the Postgres it expects: the CloudNativePG example, left out of the overlay, holds pgw-secrets' databases and users, replicates synchronously, and has room for every pod's connections", () => {
    const example = "postgres-cloudnative-pg.example.yaml";
    expect(read(`${dir}/kustomization.yaml`)[0].resources).not.toContain(example);
    const objects = read(`${dir}/${example}`);
    const [cluster] = objects.filter((o) => o.kind === "Cluster");
    const roles = cluster.spec.managed.roles.filter((r: any) => r.ensure === "present" && r.login === true).map((r: any) => r.name);
    const databases = objects.filter((o) => o.kind === "Database").map((d) => [d.spec.name, d.spec.owner, d.spec.cluster.name, roles.includes(d.spec.owner)]);
    const units = ofKind(docs, "Deployment")
      .map((d) => d.metadata.name)
      .filter((unit) => unitEnvironment("production", unit).DATABASE_URL !== undefined);
    expect(units.sort()).toEqual(Object.keys(SERVICE_PORTS).sort());
    const urls = units.map((unit) => new URL(unitEnvironment("production", unit).DATABASE_URL!));
    expect(databases.sort()).toEqual(urls.map((url) => [url.pathname.slice(1), url.username, cluster.metadata.name, true]).sort());
    expect([cluster.spec.instances >= 3, cluster.spec.postgresql.synchronous?.number >= 1]).toEqual([true, true]);

    // Each pod: DB_POOL_SIZE + 1 (LISTEN); the ledger's tariff cache listens on one more
    // (configmap.yaml). Pods: the autoscaler's maximum or the replicas, and one more in a rollout.
    const connections = units.reduce((sum, unit) => {
      const deployment = deploymentOf("production", unit);
      const pods = (autoscalerOf("production", unit)?.spec.maxReplicas ?? deployment.spec.replicas) + deployment.spec.strategy.rollingUpdate.maxSurge;
      const perPod = serviceConfig(unit, unitEnvironment("production", unit)).DB_POOL_SIZE + 1 + (unit === "ledger" ? 1 : 0);
      return sum + pods * perPod;
    }, 0);
    // Kept for superusers (3 by default), the operator's own connections and an operator's psql.
    const reserved = 10;
    expect(connections + reserved).toBeLessThanOrEqual(Number(cluster.spec.postgresql.parameters.max_connections));
  });
});

describe("deploy/k8s", () => {
  const configMap = configMapOf("base");
  const deployments = RPC_UNITS.map((unit) => [unit, unitEnvironment("base", unit)] as const);

  it.each(deployments)("%s takes from a Secret of its own the NATS user of deploy/nats/auth.conf named after it", (unit, env) => {
    expect(loadNatsAuth(env)).toEqual({ user: unit, pass: expect.any(String), token: undefined, creds: undefined });
    expect(natsUsers.has(unit)).toBe(true);
    expect(env.NATS_URL).not.toMatch(/@/); // credentials stay out of the ConfigMap
  });

  it.each(DEPLOYMENTS)("%s: %s lets the longest call finish on shutdown, within its pod's grace period", (render, unit) => {
    const grace = Number(configMapOf(render).SHUTDOWN_GRACE_MS);
    const gateway = loadGatewayConfig(unitEnvironment(render, "gateway"));
    expect(grace).toBeGreaterThanOrEqual(Math.max(CONFIRM_TIMEOUT_MS, gateway.CREATE_TIMEOUT_MS, gateway.CANCEL_TIMEOUT_MS));
    const pod = deploymentOf(render, unit).spec.template.spec;
    const preStopSeconds = Number(pod.containers[0].lifecycle.preStop.exec.command[1]);
    // preStop, then the calls in flight, then closing consumers, NATS and the pools.
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThanOrEqual(preStopSeconds * 1000 + grace + 10_000);
  });

  it("routes provider callbacks to routing's Service, and signs them with the secret routing checks", () => {
    const routing = Object.fromEntries(deployments)["routing"];
    expect(routing.CALLBACK_BASE_URL).toBe("http://routing:9092");
    expect(loadRoutingConfig(routing).SEED_SANDBOX).toBe(true); // the base ships the sandbox, so it seeds its routes
    const sandbox = unitEnvironment("base", "provider-sandbox");
    expect(sandbox.CALLBACK_SECRET).toBe(routing.SANDBOX_CALLBACK_SECRET);
  });

  it("labels and names the ports the network policies select: component service with grpc and health, the gateway's http, admin and health", () => {
    for (const unit of Object.keys(SERVICE_PORTS)) {
      const deployment = deploymentOf("base", unit);
      expect(deployment.spec.template.metadata.labels["app.kubernetes.io/component"]).toBe("service");
      expect(deployment.spec.template.spec.containers[0].ports.map((p: { name: string }) => p.name).sort()).toEqual(["grpc", "health"]);
    }
    const gateway = deploymentOf("base", "gateway");
    expect(gateway.spec.template.metadata.labels["app.kubernetes.io/component"]).toBe("gateway");
    expect(gateway.spec.template.spec.containers[0].ports.map((p: { name: string }) => p.name).sort()).toEqual(["admin", "health", "http"]);
  });

  it.each(Object.keys(RENDERS) as RenderName[])("%s: its PodMonitor scrapes /metrics on the health port of every gateway and service pod, one job per unit", (render) => {
    const [monitor] = ofKind(RENDERS[render], "PodMonitor");
    const { selector, podMetricsEndpoints, jobLabel } = monitor.spec;
    const selects = (labels: Record<string, string>) =>
      selector.matchExpressions.every((e: { key: string; operator: string; values: string[] }) => e.operator === "In" && e.values.includes(labels[e.key]));
    const scraped = ofKind(RENDERS[render], "Deployment").filter((d) => selects(d.spec.template.metadata.labels));
    expect(scraped.map((d) => d.metadata.name).sort()).toEqual(["gateway", ...Object.keys(SERVICE_PORTS)].sort());
    for (const d of scraped) {
      const labels = d.spec.template.metadata.labels;
      expect({ unit: d.metadata.name, job: labels[jobLabel], ports: d.spec.template.spec.containers[0].ports.map((p: { name: string }) => p.name) }).toEqual({
        unit: d.metadata.name,
        job: d.metadata.name,
        ports: expect.arrayContaining(["health"]),
      });
    }
    expect(podMetricsEndpoints).toEqual([expect.objectContaining({ port: "health", path: "/metrics" })]);
  });

  it("runs in every container the bundle of the unit it names, as the build writes it", () => {
    const files = ["gateway", "operations", "routing", "ledger", "receipts", "notifier", "provider-sandbox", "migrate-job"];
    const containers = files.flatMap((file) => read(`deploy/k8s/${file}.yaml`).flatMap((d) => d?.spec?.template?.spec?.containers ?? []));
    expect(containers.length).toBe(12);
    for (const c of containers) expect([c.name, c.args]).toEqual([c.name, [bundleOf(c.name)]]);
  });

  describe("mutual TLS between the units", () => {
    const namespace = read("deploy/k8s/kustomization.yaml")[0].namespace as string;
    const certificates = ofKind(RENDERS.base, "Certificate").concat(ofKind(RENDERS.base, "Issuer"));
    const issuers = new Map(certificates.filter((d) => d.kind === "Issuer").map((d) => [d.metadata.name, d.spec]));

    it("has cert-manager issue them: certificates.yaml is in the base, and the units' Issuer signs with a CA it issues", () => {
      expect(read("deploy/k8s/kustomization.yaml")[0].resources).toContain("certificates.yaml");
      const ca = certificates.find((d) => d.kind === "Certificate" && d.spec.isCA === true)!;
      expect(issuers.get(ca.spec.issuerRef.name)).toEqual({ selfSigned: {} });
      const unitIssuers = new Set(certificates.filter((d) => d.kind === "Certificate" && d !== ca).map((d) => d.spec.issuerRef.name));
      expect([...unitIssuers].map((name) => issuers.get(name))).toEqual([{ ca: { secretName: ca.spec.secretName } }]);
      // One certificate per RPC unit, and none for anything else.
      expect(certificates.filter((d) => d.kind === "Certificate" && d !== ca).map((d) => d.spec.secretName).sort()).toEqual(RPC_UNITS.map((u) => `pgw-tls-${u}`).sort());
    });

    it.each(RPC_UNITS)("%s reads its own certificate, key and CA from its Secret pgw-tls-<unit>, mounted read-only", (unit) => {
      const pod = deploymentOf("base", unit).spec.template.spec;
      const container = pod.containers[0];
      const env = environmentOf(container, configMap);
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
      const { spec } = certificate!;
      expect(spec.uris).toEqual([`spiffe://pgw/unit/${unit}`]);
      const labels = deploymentOf("base", unit).spec.template.metadata.labels;
      const service = ofKind(RENDERS.base, "Service").find((s) => Object.entries(s.spec.selector).every(([k, v]) => labels[k] === v))!.metadata.name;
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
        const env = environmentOf(container, configMap);
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
      const env = environmentOf(container, configMap);
      expect(env.MIGRATIONS).toBe("only");
      expect(() => LOADERS[container.name](env)).not.toThrow();
    }
  });
});

describe("deploy/Dockerfile", () => {
  it("runs the image as a numeric non-root user and group, the ones every pod's securityContext names", () => {
    const { uid, gid } = imageUser();
    expect([uid, gid]).toEqual([expect.stringMatching(/^\d+$/), expect.stringMatching(/^\d+$/)]);
    expect(Number(uid)).toBeGreaterThan(0);
    const pods = [...DEPLOYMENTS.map(([render, unit]) => deploymentOf(render, unit).spec.template.spec), read("deploy/k8s/migrate-job.yaml")[0].spec.template.spec];
    for (const pod of pods) expect([pod.securityContext.runAsUser, pod.securityContext.runAsGroup]).toEqual([Number(uid), Number(gid)]);
    // Compose runs the image's user: no unit's service overrides it.
    for (const unit of UNITS) expect([unit.name, composeServices[unit.name].user]).toEqual([unit.name, undefined]);
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
  const services = composeServices;

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

  /**
   * Where compose and the base's manifests may differ in the variables a unit reads, each with why.
   * The names compared are those a unit reads (the ConfigMap goes to every unit, which ignores what
   * it does not read); a difference not listed here fails, and so does a listed one no unit has.
   */
  const ONLY_IN_COMPOSE: Record<string, string> = {
    LOCAL_MODE: "compose runs every unit in local mode: development defaults for its secrets, never for production",
    BIND_HOST: "local mode listens on loopback; in a container the peers come through its network, so 0.0.0.0",
  };
  const ONLY_IN_MANIFESTS: Record<string, string> = {
    DATA_KEYS: "a development secret: local mode seals under its built-in development key",
    DATA_KEY_ID: "a development secret: local mode seals under its built-in development key",
    SANDBOX_CALLBACK_SECRET: "a development secret: routing and the sandbox share local mode's default",
    CALLBACK_SECRET: "a development secret: routing and the sandbox share local mode's default",
    SEED_SANDBOX: "local mode seeds the sandbox by default; outside it the base says so (and the production overlay says no)",
    NATS_STREAM_REPLICAS: "compose runs one NATS server, which holds the stream's one copy (the default)",
    TRUSTED_PROXIES: "compose publishes the gateway on the laptop's loopback with no proxy in front",
  };
  const differences = (unit: string) => {
    const manifests = unitEnvironment("base", unit);
    const reads = variablesRead(unit, manifests);
    const compose = Object.keys(composeServices[unit].environment).filter((name) => reads.has(name));
    const k8s = Object.keys(manifests).filter((name) => reads.has(name));
    return { onlyInCompose: compose.filter((name) => !k8s.includes(name)).sort(), onlyInManifests: k8s.filter((name) => !compose.includes(name)).sort() };
  };

  it.each(UNITS.map((u) => u.name))("%s reads the variables its Deployment sets (ConfigMap, Secrets, env) from compose too, but for the differences listed here", (unit) => {
    const { onlyInCompose, onlyInManifests } = differences(unit);
    expect({ unit, onlyInCompose: onlyInCompose.filter((name) => !(name in ONLY_IN_COMPOSE)), onlyInManifests: onlyInManifests.filter((name) => !(name in ONLY_IN_MANIFESTS)) }).toEqual({
      unit,
      onlyInCompose: [],
      onlyInManifests: [],
    });
  });

  it("lists only differences some unit has", () => {
    const all = UNITS.map((u) => differences(u.name));
    expect(Object.keys(ONLY_IN_COMPOSE).filter((name) => !all.some((d) => d.onlyInCompose.includes(name)))).toEqual([]);
    expect(Object.keys(ONLY_IN_MANIFESTS).filter((name) => !all.some((d) => d.onlyInManifests.includes(name)))).toEqual([]);
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
