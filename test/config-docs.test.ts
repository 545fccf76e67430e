/**
 * Every environment variable a unit reads is documented in docs/configuration.md, and every
 * variable its tables name is read by some unit: the whole stack starts with environments that
 * record each variable looked up.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { startStack } from "./support/stack";

const VARIABLE = /^[A-Z][A-Z0-9_]*$/;
const doc = readFileSync(path.join(__dirname, "..", "docs", "configuration.md"), "utf8");

/** The variables named in backticks in the first column of the page's tables. */
function tabulated(markdown: string): Set<string> {
  const firstCells = markdown.split("\n").filter((line) => line.startsWith("| `")).map((line) => line.split("|")[1]);
  return new Set(firstCells.flatMap((cell) => [...cell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1])));
}

it("documents every variable the units read, and names none they do not", async () => {
  const read = new Map<string, Set<string>>();
  const recording = (unit: string, env: NodeJS.ProcessEnv) =>
    new Proxy(env, {
      get(target, key) {
        if (typeof key === "string" && VARIABLE.test(key)) read.set(key, (read.get(key) ?? new Set()).add(unit));
        return Reflect.get(target, key);
      },
    });
  const stack = await startStack({ observeEnv: recording });
  await stack.stop();

  expect(read.size).toBeGreaterThan(40);
  const documented = tabulated(doc);
  const undocumented = [...read.keys()].filter((name) => !documented.has(name)).map((name) => `${name} (${[...read.get(name)!].join(", ")})`);
  expect(undocumented).toEqual([]);
  expect([...documented].filter((name) => !read.has(name))).toEqual([]);
}, 120_000);
