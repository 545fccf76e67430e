/**
 * An operation's `number` (a card or phone number) for its webhook body, from operations: for a
 * status event that carries no sealed number the notifier can open (events.ts numberFor;
 * docs/architecture.md, Secrets and card numbers).
 */
import { createClient } from "@connectrpc/connect";
import { createPeerTransport, type GrpcTls } from "@pgw/kit/rpc";
import type { Registry } from "prom-client";
import { OperationsService } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";

/** The operation's number, or undefined when it has none (a payment cancelled before its requisites). */
export type NumberSource = (shopId: string, operationId: string) => Promise<string | undefined>;

/** Deadline of the call; a failure only delays the event, which the consumer retries. */
const TIMEOUT_MS = 5000;

/** Asks OperationsService.GetOperationState; throws when operations cannot answer. */
export function operationsNumberSource(operationsUrl: string, tls: GrpcTls | null, registry?: Registry): NumberSource {
  const client = createClient(OperationsService, createPeerTransport(operationsUrl, { timeoutMs: TIMEOUT_MS, tls, registry }));
  return async (shopId, operationId) => {
    const { operation } = await client.getOperationState({ shopId, ref: { ref: { case: "operationId", value: operationId } } });
    return operation?.number || undefined;
  };
}
