import { execFileSync } from "node:child_process";
import fs from "node:fs";

/**
 * A program the tests need from Debian: the binary `override` names (an environment variable's
 * value), else `binary`, installed with apt from `pkg` when missing (the project reaches Debian's
 * mirror, not the tools' own downloads). `need` says what needs it, for the error when apt fails.
 */
export function debianTool(binary: string, pkg: string, need: string, override: { name: string; value?: string }): string {
  if (override.value) return override.value;
  if (!fs.existsSync(binary)) {
    try {
      execFileSync("apt-get", ["install", "-y", "--no-install-recommends", pkg], { stdio: "pipe" });
    } catch (err) {
      const reason = (err as { stderr?: Buffer }).stderr?.toString().trim() ?? String(err);
      throw new Error(`${need}: "apt-get install ${pkg}" failed (${reason}); install it or set ${override.name}`);
    }
  }
  return binary;
}
