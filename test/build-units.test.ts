/**
 * The production build (`pnpm build`, scripts/build-units.ts): every unit's bundle, copied with its
 * migrations to a folder with no node_modules and no sources (as the image holds them), runs on
 * plain Node against the run's Postgres and NATS; together they take a payment from create to
 * completed and credited, review a PDF receipt in the bundled parser process, serve the OpenAPI
 * document and the checkout's script and stylesheet copied beside the gateway's bundle, and each
 * stops with 0 on SIGTERM.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePortsForLater, localUrls, readinessUrl, resolveUnitPorts, UNITS, unitEnvironment, portOverrideVariable, DEFAULT_ADMIN_TOKEN } from "../deploy/local/src";
import { buildUnits, unitDir } from "../scripts/build-units";
import { readOpenApiDocument } from "../gateway/src/routes/openapi-document";
import { readCheckoutAssets } from "../gateway/src/checkout/assets";
import { receiptPdf } from "../services/receipts/test/receipt-pdfs";
import { databaseServerUrl, dropDatabases, natsUrl, uniqueDatabaseUrl } from "./support/infra";
import { pollUntil } from "./support/poll";

const ROOT = path.join(__dirname, "..");
const image = mkdtempSync(path.join(tmpdir(), "pgw-image-"));
const children: { name: string; child: ChildProcess; exit: Promise<number | null> }[] = [];
const databases: string[] = [];
let urls: ReturnType<typeof localUrls>;

beforeAll(async () => {
  await buildUnits();
  const portEnv: NodeJS.ProcessEnv = {};
  // Distinct ports below the ephemeral range: the kernel may hand one ephemeral port out twice in
  // a row, and outgoing connections may take it before the unit binds it.
  const variables = UNITS.flatMap((unit) => Object.keys(unit.ports).map((variable) => portOverrideVariable(unit.name, variable)));
  const picked = await freePortsForLater(variables.length);
  variables.forEach((variable, i) => (portEnv[variable] = String(picked[i])));
  const ports = resolveUnitPorts(portEnv);
  urls = localUrls(ports);
  const namespace = `t${randomBytes(4).toString("hex")}`;
  for (const group of [UNITS.filter((u) => u.kind === "service"), UNITS.filter((u) => u.kind === "gateway")]) {
    await Promise.all(
      group.map(async (unit) => {
        const dir = unitDir(unit.entry);
        cpSync(path.join(ROOT, dir, "dist"), path.join(image, dir, "dist"), { recursive: true });
        if (existsSync(path.join(ROOT, dir, "prisma"))) cpSync(path.join(ROOT, dir, "prisma"), path.join(image, dir, "prisma"), { recursive: true });
        const env = unitEnvironment(unit, { databaseServerUrl: databaseServerUrl(), natsUrl: natsUrl(), ports, baseEnv: { PATH: process.env.PATH, NATS_NAMESPACE: namespace, LOG_LEVEL: "warn" } });
        if (unit.database) databases.push((env.DATABASE_URL = uniqueDatabaseUrl(unit.name)));
        const child = spawn(process.execPath, [path.join(dir, "dist", "main.js")], { cwd: image, env, stdio: ["ignore", "ignore", "pipe"] });
        let stderr = "";
        child.stderr!.on("data", (chunk) => (stderr = (stderr + chunk).slice(-4000)));
        children.push({ name: unit.name, child, exit: new Promise((resolve) => child.once("exit", (code) => resolve(code))) });
        const ready = await pollUntil(() => fetch(readinessUrl(unit, ports)).then((r) => r.status, () => 0), (status) => status === 204, 60_000, 200);
        if (ready !== 204) throw new Error(`${unit.name} (bundle) not ready; its stderr:\n${stderr}`);
      }),
    );
  }
}, 180_000);

afterAll(async () => {
  for (const { child } of children) child.kill("SIGKILL");
  await dropDatabases(databases);
  rmSync(image, { recursive: true, force: true });
});

const admin = (method: string, route: string, body?: unknown) =>
  fetch(`${urls.ADMIN_BASE_URL}${route}`, { method, headers: { authorization: `Bearer ${DEFAULT_ADMIN_TOKEN}`, "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<any>);

test("the bundled units take a payment from create to completed and credited, and stop with 0 on SIGTERM", async () => {
  const merchant = await admin("POST", "/admin/api/merchants", { name: "Bundle merchant" });
  const shop = await admin("POST", "/admin/api/shops", { merchant_id: merchant.id, name: "Bundle shop" });
  const { api_key: apiKey } = await admin("POST", `/admin/api/shops/${shop.id}/api-keys`, { label: "bundle" });
  const post = (route: string, body: unknown) =>
    fetch(`${urls.PUBLIC_BASE_URL}${route}`, { method: "POST", headers: { "x-api-key": apiKey, "content-type": "application/json" }, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  const created = await post("/v1/payment", { merchant_operation_id: "bundle-1", client_id: "c1", method: "WT_RUB_C2C", amount: "1500.00", currency: "RUB" });
  expect(created).toMatchObject({ status: 200, body: { status: "pending", expected_amount: "1500.00" } });
  const paid = await fetch(`${urls.SANDBOX_URL}/control/operations/${created.body.operation_id}/pay`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount: "1500.00" }) });
  expect(paid.status).toBe(200);
  const state = await pollUntil(() => post("/v1/get_operation_state", { operation_id: created.body.operation_id }), (s) => s.body.status === "completed", 15_000, 100);
  expect(state.body).toMatchObject({ status: "completed", actual_amount: "1500.00", receipt_evidence_status: expect.any(String) });
  const balances = await pollUntil(
    () => fetch(`${urls.PUBLIC_BASE_URL}/v1/balances`, { headers: { "x-api-key": apiKey } }).then((r) => r.json() as Promise<any>),
    (b) => b.balances?.find((row: any) => row.currency === "RUB")?.balance === state.body.settlement_amount,
    10_000,
  );
  expect(balances.balances.find((row: any) => row.currency === "RUB").balance).toBe(state.body.settlement_amount);

  // A receipt-confirmed payment: the PDF is parsed by the parser script copied beside the receipts bundle.
  await fetch(`${urls.SANDBOX_URL}/control/scenario`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ method: "WT_RUB_C2C", accept: "accept", requires_receipt: true }) });
  const awaiting = await post("/v1/payment", { merchant_operation_id: "bundle-2", client_id: "c1", method: "WT_RUB_C2C", amount: "700.00", currency: "RUB" });
  expect(awaiting.body.status).toBe("awaiting_confirmation");
  await fetch(`${urls.SANDBOX_URL}/control/operations/${awaiting.body.operation_id}/pay`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount: "700.00" }) });
  const form = new FormData();
  form.append("operation_id", awaiting.body.operation_id);
  form.append("confirmation_type", "receipt");
  form.append("receipt", new Blob([await receiptPdf({ amount: "700.00 RUB", recipient: awaiting.body.number })], { type: "application/pdf" }), "receipt.pdf");
  const confirmed = await fetch(`${urls.PUBLIC_BASE_URL}/v1/confirm_payment`, { method: "POST", headers: { "x-api-key": apiKey }, body: form });
  expect(await confirmed.json()).toMatchObject({ status: "completed", actual_amount: "700.00" });

  // The image holds no docs/: the gateway serves the copy beside its bundle.
  const openapi = await fetch(`${urls.PUBLIC_BASE_URL}/openapi.json`);
  expect(openapi.status).toBe(200);
  expect(await openapi.json()).toEqual(readOpenApiDocument(path.join(ROOT, "gateway", "src")));
  const checkout = readCheckoutAssets(path.join(ROOT, "gateway", "src"));
  for (const url of [checkout.script, checkout.stylesheet]) expect([url, (await fetch(`${urls.PUBLIC_BASE_URL}${url}`)).status]).toEqual([url, 200]);

  for (const { child } of [...children].reverse()) child.kill("SIGTERM");
  const codes = await Promise.all(children.map(async ({ name, exit }) => [name, await exit]));
  expect(Object.fromEntries(codes)).toEqual(Object.fromEntries(UNITS.map((u) => [u.name, 0])));
}, 120_000);
