/**
 * The bench's host baseline: a real bare Koa server in a child process under autocannon, answering
 * every request, and gone afterwards.
 */
import { execFileSync } from "node:child_process";
import { koaBaseline } from "../scripts/bench/baseline";
import { pollUntil } from "./support/poll";

// Only this process's children: another test run on the machine may have its own baseline server up.
const baselineServers = () =>
  execFileSync("ps", ["-eo", "ppid=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((l) => l.trim().startsWith(`${process.pid} `) && l.includes("app.listen(0") && l.includes("koa")).length;

test("measures a bare Koa server's requests per second and stops it", async () => {
  const rps = await koaBaseline(1);
  // A failed or absent server answers none (or throws). How many a live one answers depends on the
  // host and on what else runs: under a full test run this host has dropped to 65 a second.
  expect(rps).toBeGreaterThan(0);
  // It is killed on the way out; its exit follows a moment later.
  expect(await pollUntil(baselineServers, (n) => n === 0, 5000)).toBe(0);
}, 30_000);
