import { execFileSync } from "node:child_process";
import fs from "node:fs";

const DEBIAN_PROMTOOL = "/usr/bin/promtool";

/**
 * The machine's promtool: `PROMTOOL_PATH`, or Debian's `prometheus` package's, installed with apt
 * when missing (as test/support/browser.ts installs Chromium).
 */
export function promtoolPath(): string {
  const configured = process.env.PROMTOOL_PATH;
  if (configured) return configured;
  if (!fs.existsSync(DEBIAN_PROMTOOL)) {
    try {
      execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "prometheus"], { stdio: "pipe" });
    } catch (err) {
      const reason = (err as { stderr?: Buffer }).stderr?.toString().trim() ?? String(err);
      throw new Error(`the alert rules are checked with promtool: "apt-get install prometheus" failed (${reason}); install it or set PROMTOOL_PATH`);
    }
  }
  return DEBIAN_PROMTOOL;
}

/** Runs promtool with `args` in `cwd`; answers its output, or throws with it when promtool fails. */
export function promtool(args: string[], cwd: string): string {
  try {
    return execFileSync(promtoolPath(), args, { cwd, stdio: "pipe" }).toString();
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`promtool ${args.join(" ")} failed:\n${stdout?.toString() ?? ""}${stderr?.toString() ?? ""}`);
  }
}
