import { addressBucket, clientAddress, parseTrustedProxies } from "./client-address";

describe("client address behind trusted proxies", () => {
  const proxies = parseTrustedProxies("10.0.0.0/8, 192.0.2.1, fd00::/8");

  it("takes the peer as the client when it is no trusted proxy, whatever X-Forwarded-For says", () => {
    expect(clientAddress("198.51.100.7", "203.0.113.9", proxies)).toBe("198.51.100.7");
    expect(clientAddress("198.51.100.7", "203.0.113.9", parseTrustedProxies(""))).toBe("198.51.100.7");
  });

  it("takes the nearest address that is no trusted proxy, never what the client wrote left of it", () => {
    expect(clientAddress("10.1.2.3", "203.0.113.9", proxies)).toBe("203.0.113.9");
    // The client forged the first entry; the proxy appended the address it saw.
    expect(clientAddress("10.1.2.3", "1.1.1.1, 203.0.113.9", proxies)).toBe("203.0.113.9");
    // Two proxies in a row: both skipped.
    expect(clientAddress("10.1.2.3", "203.0.113.9, 192.0.2.1", proxies)).toBe("203.0.113.9");
    // Only proxies: the farthest one is the client.
    expect(clientAddress("10.1.2.3", "10.9.9.9", proxies)).toBe("10.9.9.9");
    expect(clientAddress("10.1.2.3", undefined, proxies)).toBe("10.1.2.3");
  });

  it("stops at a malformed entry, at the last proxy read", () => {
    expect(clientAddress("10.1.2.3", "203.0.113.9, not-an-ip", proxies)).toBe("10.1.2.3");
    expect(clientAddress("10.1.2.3", "203.0.113.9, 0x7f.1", proxies)).toBe("10.1.2.3");
  });

  it("reads IPv4-mapped IPv6 peers as IPv4, and matches IPv6 ranges", () => {
    expect(clientAddress("::ffff:10.1.2.3", "203.0.113.9", proxies)).toBe("203.0.113.9");
    expect(clientAddress("::ffff:198.51.100.7", undefined, proxies)).toBe("198.51.100.7");
    expect(clientAddress("fd12::1", "2001:db8::5", proxies)).toBe("2001:db8::5");
  });

  it("refuses a TRUSTED_PROXIES entry that is no address or range", () => {
    for (const bad of ["10.0.0.0/33", "example.com", "10.0.0.0/8/1", "::ffff:10.0.0.0/104", "10.0.0.0/-1"]) {
      expect(() => parseTrustedProxies(bad)).toThrow(/not an IP address or CIDR range/);
    }
  });

  it("counts an IPv6 client by its /64 and an IPv4 client by its address", () => {
    expect(addressBucket("2001:db8:1:2::1")).toBe(addressBucket("2001:db8:1:2:ffff::9"));
    expect(addressBucket("2001:db8:1:2::1")).not.toBe(addressBucket("2001:db8:1:3::1"));
    expect([addressBucket("198.51.100.7"), addressBucket("198.51.100.8")]).toEqual(["198.51.100.7", "198.51.100.8"]);
  });
});
