/**
 * `domain/` holds each unit's pure rules: they decide, they never reach a database, a broker, the
 * network or the file system. So a domain file imports only other domain files of its unit and
 * libraries that compute (`@pgw/contracts`, the generated protobuf types, decimal.js, …) — never
 * the kit's rooms, pg, Prisma, Kysely, NATS, Connect, Koa or Node's I/O modules. A test beside a
 * rule may also import the unit's test fixtures and fast-check.
 */
import fs from "node:fs";
import path from "node:path";

const root = path.join(__dirname, "..");
const servicesDir = path.join(root, "services");

/** What a domain file must never import: the I/O the rules stay out of. */
const FORBIDDEN = [
  /^@pgw\/kit(\/|$)/,
  /^pg$/,
  /^@prisma\//,
  /^kysely$/,
  /^nats$/,
  /^@connectrpc\//,
  /^@grpc\//,
  /^koa/,
  /^@koa\//,
  /^undici$/,
  /^node:(fs|fs\/promises|http|https|http2|dns|child_process|worker_threads|net\/promises)$/,
];

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : []));
}

const domainFiles = fs
  .readdirSync(servicesDir)
  .map((unit) => path.join(servicesDir, unit, "src", "domain"))
  .filter((dir) => fs.existsSync(dir))
  .flatMap(filesUnder);

const importsOf = (file: string) => [...fs.readFileSync(file, "utf8").matchAll(/^\s*(?:import|export)\b[^"']*?from\s+["']([^"']+)["']|^\s*import\s+["']([^"']+)["']/gm)].map((m) => m[1] ?? m[2]);

/** Why `spec`, imported by `file`, breaks the rule; null when it keeps it. */
function breach(file: string, spec: string): string | null {
  if (FORBIDDEN.some((pattern) => pattern.test(spec))) return `imports ${spec}`;
  if (!spec.startsWith(".")) return null;
  const domainDir = file.slice(0, file.indexOf(`${path.sep}domain${path.sep}`) + `${path.sep}domain`.length);
  const target = path.resolve(path.dirname(file), spec);
  if (target.startsWith(domainDir + path.sep)) return null;
  // A test may use its unit's fixtures; a rule never reaches outside domain/.
  if (file.endsWith(".test.ts") && target.includes(`${path.sep}test${path.sep}`)) return null;
  return `imports ${spec}, outside its domain/`;
}

test("every unit has domain rules to check", () => {
  expect(domainFiles.length).toBeGreaterThan(30);
});

test("no domain/ file imports the kit's I/O rooms, a database, NATS, Connect or Node's I/O modules", () => {
  const breaches = domainFiles.flatMap((file) => importsOf(file).flatMap((spec) => breach(file, spec) ?? []).map((why) => `${path.relative(root, file)} ${why}`));
  expect(breaches).toEqual([]);
});

test("the check sees a forbidden import when there is one", () => {
  const file = path.join(servicesDir, "ledger", "src", "domain", "journal.ts");
  expect(breach(file, "@pgw/kit/db")).toBe("imports @pgw/kit/db");
  expect(breach(file, "../store")).toBe("imports ../store, outside its domain/");
  expect(breach(file, "./flows")).toBeNull();
  expect(breach(file, "@pgw/contracts")).toBeNull();
});
