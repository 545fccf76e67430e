/**
 * Where webhooks may go (the admin API checks a shop's URL with it, the notifier every delivery
 * again, after resolving the host). Outside local mode: HTTPS only, and never to an address that is loopback,
 * private (RFC 1918, CGNAT, ULA), link-local, unspecified, multicast or otherwise reserved, so a
 * merchant-supplied URL cannot reach the platform's own network (SSRF). Local mode (tests, the local
 * demo) allows plain HTTP and any address.
 */
import { BlockList, isIP } from "node:net";

/** A URL or address the policy refuses; the message goes to the attempt log. */
export class DestinationRefused extends Error {}

const forbidden = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8], // RFC 1918
  ["100.64.0.0", 10], // CGNAT (RFC 6598)
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local (cloud metadata lives here)
  ["172.16.0.0", 12], // RFC 1918
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast (deprecated)
  ["192.168.0.0", 16], // RFC 1918
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  forbidden.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 96], // unspecified, loopback and IPv4-compatible (deprecated; ::7f00:1 is 127.0.0.1)
  ["::ffff:0:0:0", 96], // IPv4-translated (RFC 2765)
  ["64:ff9b:1::", 48], // local-use NAT64
  ["100::", 64], // discard
  ["2001::", 32], // Teredo (tunnels to an embedded IPv4 address)
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4 (embeds an IPv4 address)
  ["fc00::", 7], // unique local (ULA)
  ["fe80::", 10], // link-local
  ["fec0::", 10], // deprecated site-local
  ["ff00::", 8], // multicast
] as const) {
  forbidden.addSubnet(net, prefix, "ipv6");
}

/** Embedded IPv4 of an IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible or NAT64 (64:ff9b::/96) address. */
function embeddedIpv4(ip: string): string | undefined {
  const lower = ip.toLowerCase();
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower);
  if (dotted) return dotted[1];
  // The high group may be compressed away: 64:ff9b::1 is 0.0.0.1.
  const hex = /^(?:::ffff:|::|64:ff9b::)(?:([0-9a-f]{1,4}):)?([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const hi = parseInt(hex[1] ?? "0", 16);
    const lo = parseInt(hex[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return undefined;
}

/** True when `ip` (v4 or v6 literal) must never receive a webhook outside local mode. */
export function isForbiddenAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return true;
  if (family === 4) return forbidden.check(ip, "ipv4");
  const v4 = embeddedIpv4(ip);
  if (v4 !== undefined) return isIP(v4) !== 4 || forbidden.check(v4, "ipv4");
  return forbidden.check(ip, "ipv6");
}

/**
 * Checks a webhook URL before any connection: parseable, http(s), HTTPS outside local mode, no
 * credentials, and when the host is an IP literal, an allowed address. Host names are checked
 * after resolution (see the HTTP connector). Throws DestinationRefused.
 */
export function checkWebhookUrl(raw: string, localMode: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DestinationRefused("webhook URL is not a valid URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new DestinationRefused(`webhook URL scheme ${url.protocol} is not allowed`);
  if (url.username || url.password) throw new DestinationRefused("webhook URL must not carry credentials");
  if (localMode) return url;
  if (url.protocol !== "https:") throw new DestinationRefused("webhook URL must use HTTPS");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) !== 0 && isForbiddenAddress(host)) throw new DestinationRefused(`destination address ${host} is not allowed`);
  return url;
}
