#!/usr/bin/env node
// Generates every service's Prisma client (prisma-client generator, no query engine) and its Kysely
// table types (prisma-kysely, found on the workspace's node_modules/.bin).
// The Prisma CLI wants its native schema engine first and cannot download it here, so it is
// pointed at a stub: `generate` never runs it (docs/decisions/0003-own-migrator.md).
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const stub = path.join(root, "scripts", "schema-engine-stub.sh");
const prismaBin = path.join(root, "node_modules", ".bin", "prisma");
if (!fs.existsSync(prismaBin)) process.exit(0); // first install pass, before devDependencies exist

const servicesDir = path.join(root, "services");
for (const name of fs.readdirSync(servicesDir)) {
  const schema = path.join(servicesDir, name, "prisma", "schema.prisma");
  if (!fs.existsSync(schema)) continue;
  execFileSync(prismaBin, ["generate", "--schema", schema], {
    stdio: ["ignore", "ignore", "inherit"],
    env: {
      ...process.env,
      PATH: `${path.join(root, "node_modules", ".bin")}${path.delimiter}${process.env.PATH ?? ""}`,
      PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY || stub,
      PRISMA_HIDE_UPDATE_MESSAGE: "1",
      CHECKPOINT_DISABLE: "1",
    },
  });
  console.log(`prisma client generated for ${name}`);
}
