/**
 * Every environment variable the code reads is documented in docs/configuration.md, and every
 * variable its tables name is read somewhere. The units are observed: the whole stack starts with
 * environments that record each variable looked up. The launcher's port variables are recorded the
 * same way. Everything else (the launcher's own settings, `pnpm bench` and `pnpm chaos`, the build,
 * the tests' support) is found in the source, by its reads of `process.env`.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { adminToken, resolveUnitPorts } from "../deploy/local/src/units";
import { startStack } from "./support/stack";

const ROOT = path.join(__dirname, "..");
const VARIABLE = /^[A-Z][A-Z0-9_]*$/;
const doc = readFileSync(path.join(ROOT, "docs", "configuration.md"), "utf8");

/** The system's command search path, which tests and the launcher read to find programs: not configuration. */
const NOT_CONFIGURATION = new Set(["PATH"]);
/** Folders holding no code of ours, or only generated code. */
const SKIPPED_DIRS = new Set(["node_modules", ".git", ".data", "dist", "gen", "generated"]);
const SOURCE = /\.(ts|js|mjs|cjs)$/;
const PROCESS_ENV_READ = /process\.env(?:\.([A-Z][A-Z0-9_]*)|\[\s*["'`]([A-Z][A-Z0-9_]*)["'`]\s*\])/g;

/** The variables named in backticks in the first column of the page's tables. */
function tabulated(markdown: string): Set<string> {
  const firstCells = markdown.split("\n").filter((line) => line.startsWith("| `")).map((line) => line.split("|")[1]);
  return new Set(firstCells.flatMap((cell) => [...cell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1])));
}

/** Every source file of the repository, relative to its root. */
function sourceFiles(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : sourceFiles(full);
    return SOURCE.test(entry.name) ? [path.relative(ROOT, full)] : [];
  });
}

/** Records each variable read through the returned environment as read by `reader`. */
function recorder(read: Map<string, Set<string>>) {
  return (reader: string, env: NodeJS.ProcessEnv) =>
    new Proxy(env, {
      get(target, key) {
        if (typeof key === "string" && VARIABLE.test(key)) read.set(key, (read.get(key) ?? new Set()).add(reader));
        return Reflect.get(target, key);
      },
    });
}

it("documents every variable the code reads, and names none it does not", async () => {
  const read = new Map<string, Set<string>>();
  const recording = recorder(read);
  const stack = await startStack({ observeEnv: recording });
  await stack.stop();
  expect(read.size).toBeGreaterThan(40);

  const launcher = recording("launcher", {});
  resolveUnitPorts(launcher);
  adminToken(launcher);
  expect(read.get("GATEWAY_HTTP_PORT")).toContain("launcher");

  for (const file of sourceFiles()) {
    for (const m of readFileSync(path.join(ROOT, file), "utf8").matchAll(PROCESS_ENV_READ)) {
      const name = m[1] ?? m[2];
      if (!NOT_CONFIGURATION.has(name)) read.set(name, (read.get(name) ?? new Set()).add(file));
    }
  }
  expect(read.get("BENCH_DURATION_S")).toContain(path.join("scripts", "bench.ts"));

  const documented = tabulated(doc);
  const undocumented = [...read.keys()].filter((name) => !documented.has(name)).map((name) => `${name} (${[...read.get(name)!].join(", ")})`);
  expect(undocumented).toEqual([]);
  expect([...documented].filter((name) => !read.has(name))).toEqual([]);
}, 120_000);
