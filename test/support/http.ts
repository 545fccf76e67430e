import http from "node:http";
import net from "node:net";

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** HTTP call with exact header names on the wire (fetch would normalise them), from `localAddress` when given (any of 127.0.0.0/8). */
export function request(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; localAddress?: string } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? "GET", localAddress: options.localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : null;
        } catch {
          /* not JSON: keep the text */
        }
        resolve({ status: res.statusCode!, headers: res.headers, body });
      });
    });
    req.on("error", reject);
    for (const [name, value] of Object.entries(options.headers ?? {})) req.setHeader(name, value);
    req.end(options.body);
  });
}

/** Sends raw bytes (e.g. a UTF-8 header no HTTP client would send) and answers the status code. */
export function rawStatus(port: number, head: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(head));
    let data = "";
    socket.on("data", (c) => {
      data += c.toString("latin1");
      const m = /^HTTP\/1\.1 (\d{3})/.exec(data);
      if (m) {
        socket.destroy();
        resolve(Number(m[1]));
      }
    });
    socket.on("error", reject);
  });
}
