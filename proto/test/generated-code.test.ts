import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

// The generated protobuf-es code is committed (so installs need no code generation); this test
// regenerates it with buf + protoc-gen-es and fails when the committed copy is stale.
const protoDir = path.join(__dirname, "..");
const bin = path.join(protoDir, "..", "node_modules", ".bin");

function listFiles(dir: string, base = dir): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? listFiles(full, base) : [path.relative(base, full)];
  });
}

describe("generated protobuf code", () => {
  it("matches what buf generates from the .proto files", () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "pgw-proto-"));
    try {
      execFileSync(path.join(bin, "buf"), ["generate", "-o", out], { cwd: protoDir, env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
      const fresh = path.join(out, "gen");
      const committed = path.join(protoDir, "gen");
      expect(listFiles(committed).sort()).toEqual(listFiles(fresh).sort());
      for (const file of listFiles(fresh)) {
        expect({ file, content: fs.readFileSync(path.join(committed, file), "utf8") }).toEqual({ file, content: fs.readFileSync(path.join(fresh, file), "utf8") });
      }
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);

  it("passes buf lint", () => {
    const findings = execFileSync(path.join(bin, "buf"), ["lint", "--error-format", "json"], { cwd: protoDir, stdio: "pipe" }).toString();
    expect(findings).toBe("");
  });
});
