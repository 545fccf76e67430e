import { migrate } from "@pgw/kit/db";
import { getDMMF } from "@prisma/internals";
import fs from "node:fs";
import path from "node:path";
import { Client } from "pg";
import { dropDatabases, uniqueDatabaseUrl } from "./support/infra";

const servicesDir = path.join(__dirname, "..", "services");
const services = fs.readdirSync(servicesDir).filter((s) => fs.existsSync(path.join(servicesDir, s, "prisma", "schema.prisma")));

type Column = { type: string; nullable: boolean };

// How Prisma maps a scalar (and its native type attribute) to a PostgreSQL column type.
function postgresType(type: string, nativeType: [string, string[]] | null | undefined): string {
  const [native, args] = nativeType ?? ["", []];
  if (type === "String") return native === "Uuid" ? "uuid" : "text";
  if (type === "Int") return "integer";
  if (type === "BigInt") return "bigint";
  if (type === "Boolean") return "boolean";
  if (type === "Bytes") return "bytea";
  if (type === "DateTime") return native === "Timestamptz" ? `timestamp with time zone(${args[0] ?? 3})` : `timestamp without time zone(${args[0] ?? 3})`;
  if (type === "Decimal") return `numeric(${args.join(",") || "65,30"})`;
  throw new Error(`unmapped Prisma type ${type}`);
}

async function declared(schemaFile: string): Promise<Record<string, Record<string, Column>>> {
  const dmmf = await getDMMF({ datamodel: fs.readFileSync(schemaFile, "utf8") });
  const tables: Record<string, Record<string, Column>> = {};
  for (const model of dmmf.datamodel.models) {
    const columns: Record<string, Column> = {};
    for (const f of model.fields.filter((x) => x.kind === "scalar")) {
      columns[f.dbName ?? f.name] = { type: postgresType(f.type, f.nativeType as [string, string[]] | null), nullable: !f.isRequired };
    }
    tables[model.dbName ?? model.name] = columns;
  }
  return tables;
}

async function migrated(url: string): Promise<Record<string, Record<string, Column>>> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(`
      SELECT table_name, column_name, is_nullable, data_type, numeric_precision, numeric_scale, datetime_precision
      FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`);
    const tables: Record<string, Record<string, Column>> = {};
    for (const r of rows) {
      const type =
        r.data_type === "numeric" ? `numeric(${r.numeric_precision},${r.numeric_scale})` : r.data_type.startsWith("timestamp") ? `${r.data_type}(${r.datetime_precision})` : r.data_type;
      (tables[r.table_name] ??= {})[r.column_name] = { type, nullable: r.is_nullable === "YES" };
    }
    return tables;
  } finally {
    await client.end();
  }
}

describe("each service's SQL migrations create exactly what its Prisma schema declares", () => {
  it.each(services)("%s", async (service) => {
    const url = uniqueDatabaseUrl(service);
    try {
      const { ensureDatabase } = await import("@pgw/kit/db");
      await ensureDatabase(url);
      await migrate(url, path.join(servicesDir, service, "prisma", "migrations"));
      expect(await migrated(url)).toEqual(await declared(path.join(servicesDir, service, "prisma", "schema.prisma")));
    } finally {
      await dropDatabases([url]);
    }
  });
});
