import { execFileSync } from "node:child_process";
import { debianTool } from "./debian-tool";

/** The machine's promtool: `PROMTOOL_PATH`, or Debian's `prometheus` package's (installed with apt when missing). */
const promtoolPath = () => debianTool("/usr/bin/promtool", "prometheus", "the alert rules are checked with promtool", { name: "PROMTOOL_PATH", value: process.env.PROMTOOL_PATH });

/** Runs promtool with `args` in `cwd`; answers its output, or throws with it when promtool fails. */
export function promtool(args: string[], cwd: string): string {
  try {
    return execFileSync(promtoolPath(), args, { cwd, stdio: "pipe" }).toString();
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`promtool ${args.join(" ")} failed:\n${stdout?.toString() ?? ""}${stderr?.toString() ?? ""}`);
  }
}
