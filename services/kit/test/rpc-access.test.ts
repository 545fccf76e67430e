/**
 * Who may call which method (rpc-access.ts): the identity a certificate names, RPC_TEAM_GRANTS, and
 * the kit's TLS server refusing with permission_denied every caller a method does not name, before
 * its handler runs. Certificates come from deploy/pki/dev-certs.sh (test/support/pki.ts).
 */
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@pgw/proto/gen/grpc/health/v1/health_pb";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { randomUUID } from "node:crypto";
import { Registry } from "prom-client";
import { ConfigError } from "@pgw/kit/runtime";
import { registerGrpcHealth } from "@pgw/kit/rpc";
import { loadGrpcTls } from "@pgw/kit/rpc";
import { createLogger } from "@pgw/kit/runtime";
import { createPeerTransport } from "@pgw/kit/rpc";
import { identityOfCertificate, mayCall, only, parseTeamGrants, reads, serviceAccess } from "@pgw/kit/rpc";
import { startRpcServer, type RpcServer } from "@pgw/kit/rpc";
import { throwawayPki } from "../../../test/support/pki";

const ACCESS = [
  serviceAccess(LedgerService, {
    getBalances: reads("gateway"),
    quote: reads("operations"),
    reserve: only("operations"),
    releaseReserve: only("operations"),
    adjust: only("gateway"),
    reconcile: reads(),
    listShopPostings: reads("gateway"),
  }),
];

describe("identityOfCertificate", () => {
  it("takes the one spiffe://pgw/ unit or team URI of a certificate", () => {
    expect(identityOfCertificate("URI:spiffe://pgw/unit/ledger, DNS:ledger, DNS:localhost, IP Address:127.0.0.1")).toBe("unit/ledger");
    expect(identityOfCertificate("URI:spiffe://pgw/team/risk")).toBe("team/risk");
  });

  it("names nobody for a certificate without one, with two, or with another trust domain's or kind's", () => {
    expect(identityOfCertificate(undefined)).toBeNull();
    expect(identityOfCertificate("DNS:ledger, IP Address:127.0.0.1")).toBeNull();
    expect(identityOfCertificate("URI:spiffe://pgw/unit/ledger, URI:spiffe://pgw/unit/gateway")).toBeNull();
    expect(identityOfCertificate("URI:spiffe://other/unit/gateway")).toBeNull();
    expect(identityOfCertificate("URI:spiffe://pgw/admin/gateway")).toBeNull();
    expect(identityOfCertificate("DNS:URI:spiffe://pgw/unit/gateway")).toBeNull();
  });
});

describe("mayCall", () => {
  const grants = parseTeamGrants("finance=pgw.ledger.v1.LedgerService/Adjust", ACCESS);
  const may = (caller: string | null, method: string) => mayCall(ACCESS, grants, caller, "pgw.ledger.v1.LedgerService", method);

  it("lets a unit call only the methods that name it", () => {
    expect(may("unit/gateway", "Adjust")).toBe(true);
    expect(may("unit/operations", "Adjust")).toBe(false);
    expect(may("unit/operations", "Reserve")).toBe(true);
    expect(may("unit/gateway", "Reserve")).toBe(false);
  });

  it("lets a team call the reads, and what RPC_TEAM_GRANTS grants that team only", () => {
    expect(may("team/risk", "GetBalances")).toBe(true);
    expect(may("team/risk", "Reconcile")).toBe(true);
    expect(may("team/risk", "Reserve")).toBe(false);
    expect(may("team/risk", "Adjust")).toBe(false);
    expect(may("team/finance", "Adjust")).toBe(true);
  });

  it("refuses a caller without an identity and a method nobody declared; health and reflection are open", () => {
    expect(may(null, "GetBalances")).toBe(false);
    expect(may("unit/gateway", "Transfer")).toBe(false);
    expect(mayCall(ACCESS, grants, "unit/gateway", "pgw.other.v1.OtherService", "GetBalances")).toBe(false);
    expect(mayCall(ACCESS, grants, null, "grpc.health.v1.Health", "Check")).toBe(true);
  });
});

describe("parseTeamGrants", () => {
  it("reads team=Service/Method entries and skips services this unit does not serve", () => {
    const grants = parseTeamGrants(" finance=pgw.ledger.v1.LedgerService/Adjust, finance=pgw.ledger.v1.LedgerService/Reserve,ops=pgw.notifier.v1.NotifierService/Redeliver ", ACCESS);
    expect([...grants]).toEqual([["finance", new Set(["pgw.ledger.v1.LedgerService/Adjust", "pgw.ledger.v1.LedgerService/Reserve"])]]);
    expect(parseTeamGrants(undefined, ACCESS).size).toBe(0);
  });

  it("refuses a malformed entry and an unknown method of a service it serves", () => {
    expect(() => parseTeamGrants("finance:pgw.ledger.v1.LedgerService/Adjust", ACCESS)).toThrow(ConfigError);
    expect(() => parseTeamGrants("finance=pgw.ledger.v1.LedgerService/Transfer", ACCESS)).toThrow(
      new ConfigError("RPC_TEAM_GRANTS", 'has "finance=pgw.ledger.v1.LedgerService/Transfer": pgw.ledger.v1.LedgerService has no method Transfer'),
    );
  });
});

describe("a TLS server", () => {
  const pki = throwawayPki();
  let server: RpcServer;
  let url: string;
  const handled: string[] = [];

  beforeAll(async () => {
    pki.make("pgw", ["risk", "finance"]);
    const tls = loadGrpcTls(pki.env("ledger"))!;
    server = await startRpcServer(
      0,
      "127.0.0.1",
      (router) => {
        router.service(LedgerService, {
          getBalances: () => (handled.push("GetBalances"), { balances: [] }),
          adjust: () => (handled.push("Adjust"), {}),
        });
        registerGrpcHealth(router, { accepting: true, checks: {} }, [LedgerService.typeName]);
      },
      createLogger("rpc-access-test", "silent"),
      new Registry(),
      { tls, access: { services: ACCESS, grants: parseTeamGrants("finance=pgw.ledger.v1.LedgerService/Adjust", ACCESS) } },
    );
    url = `http://127.0.0.1:${server.port}`;
  }, 60_000);
  afterAll(async () => {
    await server?.close(100);
    pki.remove();
  });

  const ledgerAs = (holder: string) => createClient(LedgerService, createPeerTransport(url, { timeoutMs: 5000, tls: loadGrpcTls(pki.env(holder)) }));
  /** "ok", or the refusal's code and message. */
  const outcome = (call: Promise<unknown>) =>
    call.then(
      () => "ok",
      (err: unknown) => `${Code[ConnectError.from(err).code]}: ${ConnectError.from(err).rawMessage}`,
    );
  const adjust = { shopId: randomUUID(), currency: "RUB", amount: "1.00", reason: "test" };

  it("answers the units a method names, and refuses another unit's certificate with permission_denied before the handler runs", async () => {
    handled.length = 0;
    expect(await outcome(ledgerAs("gateway").adjust(adjust))).toBe("ok");
    expect(await outcome(ledgerAs("receipts").adjust(adjust))).toBe("PermissionDenied: caller unit/receipts may not call pgw.ledger.v1.LedgerService/Adjust");
    expect(await outcome(ledgerAs("receipts").getBalances({ shopId: randomUUID() }))).toMatch(/^PermissionDenied: caller unit\/receipts may not call/);
    expect(handled).toEqual(["Adjust"]);
  });

  it("lets a team read, and change only what it was granted", async () => {
    handled.length = 0;
    expect(await outcome(ledgerAs("team-risk").getBalances({ shopId: randomUUID() }))).toBe("ok");
    expect(await outcome(ledgerAs("team-risk").adjust(adjust))).toMatch(/^PermissionDenied: caller team\/risk may not call/);
    expect(await outcome(ledgerAs("team-finance").adjust(adjust))).toBe("ok");
    expect(handled).toEqual(["GetBalances", "Adjust"]);
  });

  it("will not serve a service registered with options of its own, which Connect lets replace the server's interceptors and so skip the authorisation", async () => {
    const tls = loadGrpcTls(pki.env("ledger"))!;
    const starting = startRpcServer(0, "127.0.0.1", (router) => router.service(LedgerService, {}, { interceptors: [] }), createLogger("rpc-access-test", "silent"), new Registry(), { tls, access: { services: ACCESS } });
    await expect(starting).rejects.toThrow(/options of its own/);
  });

  it("answers health to any caller of the internal CA", async () => {
    const health = createClient(Health, createPeerTransport(url, { timeoutMs: 5000, tls: loadGrpcTls(pki.env("team-risk")) }));
    expect((await health.check({})).status).toBe(Status.SERVING);
  });
});
