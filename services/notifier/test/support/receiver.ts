/**
 * A merchant's webhook receiver for tests: a real HTTP server that verifies every request with the
 * `standardwebhooks` library (an independent implementation of the signing) under the secrets the
 * test gives it. Unverified requests are answered 401 (as a merchant would) and are only counted:
 * they never reach the test's behaviour, so every assertion is about verified deliveries.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface ReceivedWebhook {
  webhookId: string;
  timestamp: string;
  signature: string;
  contentType: string;
  body: string;
  json: any;
  /** Secrets (of those the receiver knows) under which the request verifies. */
  verifiedWith: string[];
  /** HTTP status the receiver answered (undefined while hanging). */
  answered?: number;
  receivedAt: number;
  path: string;
}

/** What the receiver answers a verified request: a status and body, or "hang" (never answer). */
export type Answer = { status: number; body?: string | Buffer; stream?: boolean; delayMs?: number } | "hang";

export interface Receiver {
  url: string;
  /** Every request that verified, in arrival order. */
  verified: ReceivedWebhook[];
  /** Requests that did not verify under any known secret (answered 401). */
  rejected: number;
  /** Secrets requests are verified with; replace or extend at any time. */
  secrets: string[];
  /** Behaviour for the n-th (0-based) verified request. */
  answer: (req: ReceivedWebhook, n: number) => Answer;
  /** Verified requests answered with a 2xx. */
  successes(): ReceivedWebhook[];
  /** Requests held unanswered ("hang") whose client is still waiting: attempts in flight here. */
  held(): number;
  close(): Promise<void>;
}

/** Verifies under each secret; the secrets that verify. */
export function verifyingSecrets(secrets: string[], body: string, headers: Record<string, string>): string[] {
  return secrets.filter((s) => {
    try {
      new Webhook(s).verify(body, headers);
      return true;
    } catch {
      return false;
    }
  });
}

export async function startReceiver(init: { secrets?: string[]; answer?: Receiver["answer"] } = {}): Promise<Receiver> {
  const hanging = new Set<http.ServerResponse>();
  const receiver: Receiver = {
    url: "",
    verified: [],
    rejected: 0,
    secrets: init.secrets ?? [],
    answer: init.answer ?? (() => ({ status: 204 })),
    successes: () => receiver.verified.filter((r) => r.answered !== undefined && r.answered >= 200 && r.answered < 300),
    held: () => hanging.size,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const h = (name: string) => String(req.headers[name] ?? "");
      const headers = { "webhook-id": h("webhook-id"), "webhook-timestamp": h("webhook-timestamp"), "webhook-signature": h("webhook-signature") };
      const verifiedWith = verifyingSecrets(receiver.secrets, body, headers);
      if (req.method !== "POST" || verifiedWith.length === 0) {
        receiver.rejected++;
        res.writeHead(401).end("signature does not verify");
        return;
      }
      const got: ReceivedWebhook = {
        webhookId: headers["webhook-id"],
        timestamp: headers["webhook-timestamp"],
        signature: headers["webhook-signature"],
        contentType: h("content-type"),
        body,
        json: JSON.parse(body),
        verifiedWith,
        receivedAt: Date.now(),
        path: req.url ?? "",
      };
      const n = receiver.verified.length;
      receiver.verified.push(got);
      const answer = receiver.answer(got, n);
      if (answer === "hang") {
        hanging.add(res);
        res.on("close", () => hanging.delete(res));
        return;
      }
      got.answered = answer.status;
      if (answer.stream) {
        // An endless answer: headers, then body chunks until the client goes away.
        res.writeHead(answer.status, { "content-type": "text/plain" });
        const chunk = Buffer.alloc(16 * 1024, "x");
        const timer = setInterval(() => res.write(chunk), 1);
        res.on("close", () => clearInterval(timer));
        return;
      }
      const send = () => res.writeHead(answer.status, { "content-type": "text/plain" }).end(answer.body ?? "");
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  return receiver;
}
