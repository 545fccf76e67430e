import { fromJsonString, toJsonString, type DescMessage } from "@bufbuild/protobuf";
import { messageOf } from "./grpc-wire";

/**
 * What the kit's Connect server side (connect-server-exchange.ts) and client (connect-unary-call.ts)
 * share: Connect's unary protocol over HTTP/1.1 (connectrpc.com/docs/protocol). A request is a POST
 * to the method's gRPC path whose body is the bare message; the answer is 200 with the bare message,
 * or an error status with Connect's JSON error body. Metadata, ours included (CARRIED_METADATA),
 * travels as headers.
 */

export const CONTENT_TYPE_PROTO = "application/proto";
export const CONTENT_TYPE_JSON = "application/json";
export const TIMEOUT_HEADER = "connect-timeout-ms";
export const PROTOCOL_VERSION_HEADER = "connect-protocol-version";

/** Serializes a message, or the init shape of one, as protobuf JSON. */
export function jsonSerializerOf(schema: DescMessage): (value: unknown) => Buffer {
  return (value) => Buffer.from(toJsonString(schema, messageOf(schema, value)));
}

/** Parses protobuf JSON; fields this side does not know are ignored, as the binary format ignores them. */
export function jsonDeserializerOf(schema: DescMessage): (bytes: Buffer) => unknown {
  return (bytes) => fromJsonString(schema, bytes.toString("utf8"), { ignoreUnknownFields: true });
}
