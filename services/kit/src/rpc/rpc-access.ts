import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextKey, createContextValues, type ContextValues, type Interceptor } from "@connectrpc/connect";
import http2 from "node:http2";
import type { TLSSocket } from "node:tls";
import type http from "node:http";
import { ConfigError } from "../runtime/config";

/**
 * Who may call which RPC method. Under mutual TLS every caller presents a certificate of the
 * internal CA whose URI SAN names it: `spiffe://pgw/unit/<unit>` for a unit of the system,
 * `spiffe://pgw/team/<team>` for an internal team's client. Each unit declares, for every method of
 * its services, the units allowed to call it and whether it only reads (then internal teams may
 * call it too); `RPC_TEAM_GRANTS` grants teams more. One interceptor (rpc-server.ts) refuses every
 * other call with permission_denied. Without TLS (local mode only) nobody is identified and
 * nothing is checked.
 */

/** The units that call RPC methods, as their certificates name them. */
export type UnitName = "gateway" | "operations" | "routing" | "ledger" | "receipts" | "notifier";

export interface MethodAccess {
  readonly units: readonly UnitName[];
  /** A read: internal teams may call it too. */
  readonly teams: boolean;
}

/** A method that only reads: the units named, and every internal team. */
export const reads = (...units: UnitName[]): MethodAccess => ({ units, teams: true });
/** A method that moves money, changes state, or answers with a secret, a payer's file or a provider's live answer: only the units named (and teams granted it). */
export const only = (...units: UnitName[]): MethodAccess => ({ units, teams: false });

export interface ServiceAccess {
  service: DescService;
  /** By method name as on the wire (`GetBalances`). */
  methods: ReadonlyMap<string, MethodAccess>;
}

/** The access of every method of `service`, keyed as its generated client is (`getBalances`): leaving one out does not compile. */
export function serviceAccess<S extends DescService>(service: S, methods: { readonly [K in keyof S["method"]]: MethodAccess }): ServiceAccess {
  const byName = new Map<string, MethodAccess>();
  for (const [localName, access] of Object.entries(methods) as [string, MethodAccess][]) byName.set(service.method[localName].name, access);
  return { service, methods: byName };
}

const IDENTITY = /^URI:spiffe:\/\/pgw\/((?:unit|team)\/[a-z0-9-]+)$/;

/** The caller's identity (`unit/ledger`, `team/risk`) from a certificate's subjectaltname; null unless it names exactly one. */
export function identityOfCertificate(subjectAltName: string | undefined): string | null {
  const identities = (subjectAltName ?? "").split(", ").flatMap((entry) => IDENTITY.exec(entry)?.[1] ?? []);
  return identities.length === 1 ? identities[0] : null;
}

/** The caller of a call on a TLS server: its identity, or null for a certificate without one. Undefined without TLS. */
const CALLER = createContextKey<string | null | undefined>(undefined, { description: "pgw caller identity" });

/** The calling unit or team of a call (`unit/gateway`, `team/risk`) from its context values; undefined on a server without TLS (local mode). */
export const callerOf = (values: ContextValues): string | null | undefined => values.get(CALLER);

/** True when the call comes from an internal team rather than a unit of the system. */
export const isTeamCall = (values: ContextValues): boolean => callerOf(values)?.startsWith("team/") === true;

// One lookup per connection: a certificate does not change while its connection lives.
const identities = new WeakMap<TLSSocket, string | null>();

/** connect-node's `contextValues` for a TLS server: the caller named by the connection's client certificate. */
export function callerContextValues(req: http.IncomingMessage | http2.Http2ServerRequest): ContextValues {
  const socket = (req instanceof http2.Http2ServerRequest ? req.stream.session?.socket : req.socket) as TLSSocket | undefined;
  const values = createContextValues();
  if (!socket) return values.set(CALLER, null);
  let identity = identities.get(socket);
  if (identity === undefined) {
    identity = identityOfCertificate(socket.getPeerCertificate?.()?.subjectaltname);
    identities.set(socket, identity);
  }
  return values.set(CALLER, identity);
}

/** Extra methods per team (`RPC_TEAM_GRANTS`): team → `Service/Method` names. */
export type TeamGrants = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * RPC_TEAM_GRANTS: `team=package.Service/Method` entries, comma-separated. A grant naming a service
 * `services` does not hold is ignored (one list can serve every unit); an unknown method of one it
 * holds, or a malformed entry, is a ConfigError.
 */
export function parseTeamGrants(value: string | undefined, services: readonly ServiceAccess[]): TeamGrants {
  const grants = new Map<string, Set<string>>();
  for (const entry of (value ?? "").split(",").map((e) => e.trim()).filter(Boolean)) {
    const match = /^([a-z0-9-]+)=([\w.]+)\/(\w+)$/.exec(entry);
    if (!match) throw new ConfigError("RPC_TEAM_GRANTS", `has "${entry}"; each entry is team=package.Service/Method`);
    const [, team, serviceName, method] = match;
    const service = services.find((s) => s.service.typeName === serviceName);
    if (!service) continue;
    if (!service.methods.has(method)) throw new ConfigError("RPC_TEAM_GRANTS", `has "${entry}": ${serviceName} has no method ${method}`);
    grants.set(team, (grants.get(team) ?? new Set()).add(`${serviceName}/${method}`));
  }
  return grants;
}

/** Whether `caller` may call `serviceName`/`method`. grpc.* services (health, reflection) are open to every authenticated caller. */
export function mayCall(services: readonly ServiceAccess[], grants: TeamGrants, caller: string | null, serviceName: string, method: string): boolean {
  if (serviceName.startsWith("grpc.")) return true;
  const access = services.find((s) => s.service.typeName === serviceName)?.methods.get(method);
  if (!caller || !access) return false;
  const [kind, name] = caller.split("/");
  if (kind === "unit") return access.units.includes(name as UnitName);
  return access.teams || grants.get(name)?.has(`${serviceName}/${method}`) === true;
}

/** The interceptor refusing, before its handler runs, a call whose caller may not call its method. */
export function authorizingCallers(services: readonly ServiceAccess[], grants: TeamGrants): Interceptor {
  return (next) => async (req) => {
    const caller = req.contextValues.get(CALLER);
    if (caller !== undefined && !mayCall(services, grants, caller, req.service.typeName, req.method.name)) {
      const who = caller ? `caller ${caller}` : "a certificate naming no spiffe://pgw/ identity";
      throw new ConnectError(`${who} may not call ${req.service.typeName}/${req.method.name}`, Code.PermissionDenied);
    }
    return next(req);
  };
}
