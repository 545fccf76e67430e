import http from "node:http";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";

/** One callback as the test receiver saw it. */
export interface ReceivedCallback {
  raw: string;
  signature: string;
  body: { callback_id: string; reference: string; operation_id: string; status: string; amount?: string; occurred_at: string };
}

/** A local HTTP server that records callbacks; `failNext(n)` answers the next n with 500. */
export async function startCallbackReceiver() {
  const received: ReceivedCallback[] = [];
  let failures = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      received.push({ raw, signature: String(req.headers["x-sandbox-signature"] ?? ""), body: JSON.parse(raw) });
      res.writeHead(failures > 0 ? (failures--, 500) : 200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks`,
    received,
    failNext: (n: number) => void (failures = n),
    of: (reference: string) => received.filter((c) => c.body.reference === reference),
    close: () => new Promise((r) => server.close(r)),
  };
}

/** Polls `probe` every 50 ms until it answers a value, or fails after `ms`. */
export async function waitFor<T>(probe: () => T | undefined | Promise<T | undefined>, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The text drawn in a PDF made by pdf-lib: Flate content streams, hex strings shown with Tj. */
export function pdfText(pdf: Buffer): string[] {
  const lines: string[] = [];
  // A stream's bytes are taken by its /Length: compressed data may itself end in "\r", which a
  // pattern up to "\r?\nendstream" would cut off.
  for (const m of pdf.toString("latin1").matchAll(/<<([^<>]*)>>\s*stream\r?\n/g)) {
    const length = /\/Length (\d+)/.exec(m[1]);
    if (!m[1].includes("/FlateDecode") || !length) continue;
    const start = m.index + m[0].length;
    const content = zlib.inflateSync(pdf.subarray(start, start + Number(length[1]))).toString("latin1");
    for (const t of content.matchAll(/<([0-9A-Fa-f]+)>\s*Tj/g)) lines.push(Buffer.from(t[1], "hex").toString("latin1"));
  }
  return lines;
}

/** A JSON client of one base URL: answers status and parsed body. */
export function jsonClient(base: string) {
  return async (method: string, path: string, body?: unknown, init: RequestInit = {}) => {
    const res = await fetch(base + path, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      ...init,
    });
    const text = await res.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as any, headers: res.headers };
  };
}
