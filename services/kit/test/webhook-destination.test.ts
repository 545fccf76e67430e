import { checkWebhookUrl, DestinationRefused, isForbiddenAddress } from "@pgw/contracts";

describe("webhook destination policy (SSRF guard)", () => {
  it.each([
    ["127.0.0.1", true],
    ["127.255.0.1", true],
    ["0.0.0.0", true],
    ["10.0.0.5", true],
    ["172.16.0.1", true],
    ["172.31.255.255", true],
    ["192.168.1.1", true],
    ["100.64.0.1", true],
    ["100.127.255.254", true],
    ["169.254.169.254", true],
    ["224.0.0.1", true],
    ["255.255.255.255", true],
    ["::", true],
    ["::1", true],
    ["fc00::1", true],
    ["fd12:3456::1", true],
    ["fe80::1", true],
    ["::ffff:127.0.0.1", true],
    ["::ffff:7f00:1", true],
    ["::ffff:10.0.0.1", true],
    ["64:ff9b::a9fe:a9fe", true],
    ["64:ff9b::1", true], // 0.0.0.1, the high group compressed away
    ["::7f00:1", true], // IPv4-compatible 127.0.0.1
    ["64:ff9b::808:808", false], // 8.8.8.8 through NAT64
    ["::7f00:1", true], // https://[::127.0.0.1]/ as the URL parser writes it
    ["::a00:1", true],
    ["::ffff:0:7f00:1", true],
    ["2002:7f00:1::1", true],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", true],
    ["192.88.99.1", true],
    ["not-an-ip", true],
    ["8.8.8.8", false],
    ["1.1.1.1", false],
    ["172.32.0.1", false],
    ["100.128.0.1", false],
    ["2606:4700:4700::1111", false],
    ["::ffff:8.8.8.8", false],
  ])("%s forbidden: %s", (ip, forbidden) => {
    expect(isForbiddenAddress(ip)).toBe(forbidden);
  });

  it.each([
    "http://hooks.example.com/x",
    "ftp://hooks.example.com/x",
    "https://127.0.0.1/x",
    "https://2130706433/x", // 127.0.0.1 written as a number
    "https://0x7f.1/x",
    "https://[::1]/x",
    "https://[::ffff:192.168.0.1]/x",
    "https://[::127.0.0.1]/x",
    "https://10.1.2.3:8443/x",
    "https://169.254.169.254/latest/meta-data",
    "https://user:pass@hooks.example.com/x",
    "not a url",
  ])("refuses %s outside local mode", (url) => {
    expect(() => checkWebhookUrl(url, false)).toThrow(DestinationRefused);
  });

  it("accepts public HTTPS URLs outside local mode (host names are checked after resolution)", () => {
    expect(checkWebhookUrl("https://hooks.example.com/pgw?x=1", false).hostname).toBe("hooks.example.com");
    expect(checkWebhookUrl("https://8.8.8.8/x", false).hostname).toBe("8.8.8.8");
  });

  it("allows plain HTTP and loopback in local mode", () => {
    expect(checkWebhookUrl("http://127.0.0.1:9999/hook", true).port).toBe("9999");
    expect(() => checkWebhookUrl("ftp://127.0.0.1/x", true)).toThrow(DestinationRefused);
  });
});
