/**
 * Compiles every unit for production (`pnpm build`): its entry, our workspace code (kit, proto, the
 * generated Prisma client) and the npm packages it imports, bundled by esbuild into one CommonJS
 * file, `<unit>/dist/main.js`, beside the unit's `src/`, with the scripts the code starts by path
 * from beside itself (the receipts PDF parser process) bundled next to it the same way, and the
 * files it reads from beside itself (the gateway's OpenAPI document) copied there. `pg` is bundled
 * beside it, and the tracing entry once for all (see INSTRUMENTED, buildTracingEntry). The bundles run
 * on plain Node with no tsx and no node_modules: `<unit>/dist` is what deploy/Dockerfile ships.
 */
import { build } from "esbuild";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { UNITS, type UnitName, type UnitSpec } from "../deploy/local/src/units";
import { CHECKOUT_ASSET_FILES } from "../gateway/src/checkout/assets";

const ROOT = path.join(__dirname, "..");

/** Scripts a unit's code starts by path from beside itself (ES modules), relative to its `src/`. */
const BESIDE: Partial<Record<UnitName, string[]>> = { receipts: ["connectors/pdf-process.mjs"] };
/** Files a unit reads from beside its bundle, copied as they are; relative to the repository root. */
const COPIED: Partial<Record<UnitName, string[]>> = { gateway: ["docs/openapi.yaml", ...CHECKOUT_ASSET_FILES.map((file) => `gateway/src/checkout/assets/${file}`)] };

const COMMON = { bundle: true, platform: "node", target: "node20", sourcemap: true, sourcesContent: false, logLevel: "warning" } as const;

/** A unit's folder: its entry without `src/main.ts`. */
export const unitDir = (entry: string): string => path.dirname(path.dirname(entry));

/**
 * `pg` stays out of the bundles, in a bundle of its own at `<unit>/dist/node_modules/pg`: the
 * tracing entry's pg instrumentation patches it as it is required, which a copy inlined into
 * main.js never is.
 */
const INSTRUMENTED = ["pg"];

/** Bundles package `name` (with its dependencies) as `dist/node_modules/<name>`, with the manifest its instrumentation reads the version from. */
async function buildPackageBeside(name: string, dist: string): Promise<void> {
  const manifestPath = require.resolve(`${name}/package.json`, { paths: [path.join(ROOT, "services", "kit")] });
  const { version } = JSON.parse(readFileSync(manifestPath, "utf8")) as { version: string };
  const dir = path.join(dist, "node_modules", name);
  await build({ ...COMMON, entryPoints: [path.dirname(manifestPath)], outfile: path.join(dir, "index.js"), format: "cjs" });
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name, version, main: "index.js" }));
}

/**
 * The `--require` entry that starts tracing before a unit's code loads (kit tracing-register.ts),
 * bundled once for every unit: `services/kit/dist/tracing.js`. Answers its path.
 */
export async function buildTracingEntry(): Promise<string> {
  const outfile = path.join(ROOT, "services", "kit", "dist", "tracing.js");
  await build({ ...COMMON, entryPoints: [path.join(ROOT, "services", "kit", "src", "runtime", "tracing-register.ts")], outfile, format: "cjs" });
  return outfile;
}

/** Builds one unit into `dist` (its own `<unit>/dist` unless told); answers the bundle's path. */
export async function buildUnit(unit: UnitSpec, dist = path.join(ROOT, unitDir(unit.entry), "dist")): Promise<string> {
  const { metafile } = await build({ ...COMMON, entryPoints: [path.join(ROOT, unit.entry)], outfile: path.join(dist, "main.js"), format: "cjs", external: INSTRUMENTED, metafile: true });
  const required = new Set(Object.values(metafile.outputs).flatMap((output) => output.imports.filter((i) => i.external).map((i) => i.path)));
  for (const name of INSTRUMENTED.filter((n) => required.has(n))) await buildPackageBeside(name, dist);
  for (const file of BESIDE[unit.name] ?? []) {
    await build({ ...COMMON, entryPoints: [path.join(ROOT, path.dirname(unit.entry), file)], outfile: path.join(dist, path.basename(file)), format: "esm" });
  }
  for (const file of COPIED[unit.name] ?? []) copyFileSync(path.join(ROOT, file), path.join(dist, path.basename(file)));
  return path.join(dist, "main.js");
}

/** Builds every unit and the tracing entry; answers the bundles written, relative to the repository root. */
export async function buildUnits(): Promise<string[]> {
  const outputs: string[] = [path.relative(ROOT, await buildTracingEntry())];
  for (const unit of UNITS) outputs.push(path.relative(ROOT, await buildUnit(unit)));
  return outputs;
}

if (require.main === module) {
  buildUnits().then(
    (outputs) => console.log(`built ${outputs.join(", ")}`),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
