import ipaddr from "ipaddr.js";
import { isIP } from "node:net";

type Address = ipaddr.IPv4 | ipaddr.IPv6;
/** TRUSTED_PROXIES parsed: the ranges whose `X-Forwarded-For` is believed. */
export type TrustedProxies = [Address, number][];

/** A strictly written IPv4 or IPv6 address, IPv4-mapped IPv6 (`::ffff:1.2.3.4`) as IPv4; null otherwise. */
function parseAddress(text: string): Address | null {
  return isIP(text) ? ipaddr.process(text) : null;
}

/** One TRUSTED_PROXIES entry (an address or a CIDR range); null when it is neither. */
function parseRange(entry: string): [Address, number] | null {
  const [host, bits, extra] = entry.split("/");
  if (!isIP(host) || extra !== undefined) return null;
  const address = ipaddr.parse(host);
  // Clients are compared in IPv4 form (parseAddress): an IPv4-mapped range would never match.
  if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()) return null;
  const max = address.kind() === "ipv4" ? 32 : 128;
  if (bits === undefined) return [address, max];
  return /^\d{1,3}$/.test(bits) && Number(bits) <= max ? [address, Number(bits)] : null;
}

/** TRUSTED_PROXIES: comma-separated addresses and CIDR ranges; empty trusts no proxy. Throws on a bad entry. */
export function parseTrustedProxies(list: string): TrustedProxies {
  const entries = list.split(",").map((e) => e.trim()).filter(Boolean);
  return entries.map((entry) => {
    const range = parseRange(entry);
    if (!range) throw new Error(`${JSON.stringify(entry)} is not an IP address or CIDR range (IPv4 written as IPv4)`);
    return range;
  });
}

const isTrusted = (address: Address, trusted: TrustedProxies) => trusted.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits));

/**
 * The address a request comes from. The TCP peer, unless the peer is a trusted proxy: then
 * `X-Forwarded-For` is read from its right end (the hop the proxy added) leftwards, past every
 * trusted proxy, and the first address that is not one is the client. Entries left of it were
 * written by the client and are never believed. A malformed entry ends the walk at the last
 * proxy read.
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | undefined, trusted: TrustedProxies): string {
  let current = peer ? parseAddress(peer) : null;
  if (!current) return peer ?? "unknown";
  const hops = (forwardedFor ?? "").split(",").map((hop) => hop.trim()).filter(Boolean);
  while (isTrusted(current, trusted) && hops.length > 0) {
    const next = parseAddress(hops.pop()!);
    if (!next) break;
    current = next;
  }
  return current.toString();
}

/**
 * The bucket an address counts against: an IPv4 address itself, an IPv6 address's /64 (what one
 * subscriber is typically given, so a host cannot walk its own network to get fresh buckets).
 */
export function addressBucket(address: string): string {
  const parsed = parseAddress(address);
  if (!parsed || parsed.kind() === "ipv4") return address;
  return `${parsed.toNormalizedString().split(":").slice(0, 4).join(":")}::/64`;
}
