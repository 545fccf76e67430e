/**
 * The demo shop's webhook endpoint: a small HTTP server `start` runs on a free local port, which
 * answers every webhook 204 and prints one line per webhook (its id, type and operation status), so
 * a first payment's webhook is seen arriving and the console shows it delivered.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface DemoReceiver {
  url: string;
  close(): Promise<void>;
}

/** A one-line summary of a webhook body, or its size when it is not the JSON a webhook carries. */
function summary(body: string): string {
  try {
    const event = JSON.parse(body) as { type?: string; data?: { operation_id?: string } };
    return `${event.type ?? "?"} for operation ${event.data?.operation_id ?? "?"}`;
  } catch {
    return `${Buffer.byteLength(body)} bytes`;
  }
}

export async function startDemoReceiver(say: (line: string) => void): Promise<DemoReceiver> {
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body.length < 65_536 ? (body += chunk) : undefined));
    req.on("end", () => {
      say(`demo webhook ${req.headers["webhook-id"] ?? "(no webhook-id)"}: ${summary(body)}`);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
