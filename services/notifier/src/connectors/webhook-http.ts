/**
 * The one way a webhook leaves the notifier: an HTTP POST that never follows redirects, gives up
 * after a deadline, reads at most `responseCapBytes` of the answer, and — outside local mode —
 * resolves the host itself and connects only to the address it checked (no DNS rebinding between
 * the check and the connection).
 */
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { isIP } from "node:net";
import { checkWebhookUrl, DestinationRefused, isForbiddenAddress } from "@pgw/contracts";

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Answer (status line and headers) within this, else a timeout; the body is read within it too. */
  timeoutMs: number;
  /** Stops the attempt early (the notifier is stopping). */
  signal?: AbortSignal;
}

export interface WebhookResponse {
  /** HTTP status of the answer; undefined when none arrived. */
  statusCode?: number;
  latencyMs: number;
  /** The start of the answer's body (at most the cap, NUL bytes removed). */
  snippet: string;
  /** Why no usable answer arrived (refused destination, network error, timeout); "" otherwise. */
  error: string;
}

export type PostWebhook = (req: WebhookRequest) => Promise<WebhookResponse>;

export interface HttpConnectorOptions {
  localMode: boolean;
  /** Bytes of the answer read at most; the rest is discarded and the connection closed. Default 1024. */
  responseCapBytes?: number;
  /** Name resolution (tests substitute it); defaults to the system resolver. */
  resolve?: (hostname: string) => Promise<string[]>;
}

const systemResolve = async (hostname: string): Promise<string[]> => (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/**
 * A `lookup` for http(s).request that resolves the name, refuses it when any of its addresses is
 * forbidden, and hands the socket exactly the addresses it checked.
 */
export function guardedLookup(resolve: (hostname: string) => Promise<string[]>): LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void) => {
    resolve(hostname).then(
      (addresses) => {
        if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
        const bad = addresses.find((a) => isForbiddenAddress(a));
        if (bad !== undefined) return callback(new DestinationRefused(`${hostname} resolves to ${bad}, which is not allowed`), "", 0);
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => isIP(a) === options.family) : addresses;
        if (wanted.length === 0) return callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: "ENOTFOUND" }), "", 0);
        if (options.all) return callback(null, wanted.map((a) => ({ address: a, family: isIP(a) })));
        callback(null, wanted[0], isIP(wanted[0]));
      },
      (err: NodeJS.ErrnoException) => callback(err, "", 0),
    );
  }) as LookupFunction;
}

function describe(err: unknown): string {
  if (err instanceof DestinationRefused) return `refused: ${err.message}`;
  const e = err as NodeJS.ErrnoException;
  const text = e?.code ? `${e.code}${e.message && !e.message.includes(e.code) ? `: ${e.message}` : e.message ? ` (${e.message})` : ""}` : String(e?.message ?? err);
  return text.slice(0, 500);
}

const cleanSnippet = (buf: Buffer) => buf.toString("utf8").replace(/\u0000/g, "");

/** Builds the webhook POST with the given policy. Keep-alive connections are reused per destination. */
export function createHttpConnector(opts: HttpConnectorOptions): { post: PostWebhook; close(): void } {
  const cap = opts.responseCapBytes ?? 1024;
  const lookup = opts.localMode ? undefined : guardedLookup(opts.resolve ?? systemResolve);
  const agents = {
    "http:": new http.Agent({ keepAlive: true, maxSockets: 256 }),
    "https:": new https.Agent({ keepAlive: true, maxSockets: 256 }),
  };

  const post: PostWebhook = (req) =>
    new Promise<WebhookResponse>((resolve) => {
      const started = performance.now();
      const latency = () => Math.round(performance.now() - started);
      let url: URL;
      try {
        url = checkWebhookUrl(req.url, opts.localMode);
      } catch (err) {
        resolve({ latencyMs: 0, snippet: "", error: describe(err) });
        return;
      }
      let statusCode: number | undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = (error: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.signal?.removeEventListener("abort", onAbort);
        resolve({ statusCode, latencyMs: latency(), snippet: cleanSnippet(Buffer.concat(chunks).subarray(0, cap)), error: statusCode === undefined ? error : "" });
      };
      const body = Buffer.from(req.body, "utf8");
      const request = (url.protocol === "https:" ? https : http).request(url, {
        method: "POST",
        agent: agents[url.protocol as "http:" | "https:"],
        headers: { ...req.headers, "content-length": String(body.length), "user-agent": "pgw-notifier/1" },
        lookup,
      });
      request.on("error", (err) => finish(describe(err)));
      const timer = setTimeout(() => {
        finish(`timeout after ${req.timeoutMs} ms`);
        request.destroy();
      }, req.timeoutMs);
      const onAbort = () => {
        finish("aborted: notifier stopping");
        request.destroy();
      };
      if (req.signal?.aborted) return onAbort();
      req.signal?.addEventListener("abort", onAbort);

      request.on("response", (res) => {
        statusCode = res.statusCode;
        res.on("data", (chunk: Buffer) => {
          if (settled) return;
          chunks.push(chunk);
          size += chunk.length;
          if (size >= cap) {
            // Enough for the snippet: stop reading and drop the connection instead of draining it.
            finish("");
            res.destroy();
          }
        });
        res.on("end", () => finish(""));
        res.on("error", (err) => finish(describe(err)));
        res.on("close", () => finish(""));
      });
      request.end(body);
    });

  return {
    post,
    close() {
      agents["http:"].destroy();
      agents["https:"].destroy();
    },
  };
}
