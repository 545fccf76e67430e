import { connectNats, STREAM_NAME } from "@pgw/kit/events";
import { createLogger } from "@pgw/kit/runtime";
import { natsUrl } from "./infra";
import { pollUntil } from "./poll";
import type { Stack } from "./stack";

/**
 * Waits until a durable consumer of the stack (e.g. the ledger's "ledger-status") has acknowledged
 * every event of the stream it reads (none left to deliver, none awaiting an ack), and answers
 * whether it has. Consumers ack after their transaction commits, so once an event is known to be in
 * the stream (a webhook for it arrived, say), this is the point after which the consumer has acted
 * on it, or chosen not to: a test can then check that nothing happened.
 */
export async function consumerCaughtUp(stack: Stack, durable: string, timeoutMs = 10_000): Promise<boolean> {
  const nc = await connectNats(natsUrl(), `test-${durable}-watch`, createLogger("test", "silent"), {}, () => undefined);
  try {
    const jsm = await nc.jetstreamManager();
    const idle = (info: { num_pending: number; num_ack_pending: number }) => info.num_pending === 0 && info.num_ack_pending === 0;
    return idle(await pollUntil(() => jsm.consumers.info(STREAM_NAME, `${stack.namespace}-${durable}`), idle, timeoutMs));
  } finally {
    await nc.close();
  }
}
