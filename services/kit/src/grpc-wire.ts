import { create, fromBinary, isMessage, toBinary, type DescMessage, type DescMethod, type MessageShape } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";

/**
 * What the kit's gRPC server (@grpc/grpc-js) and clients (grpc-unary-call.ts) share: how protobuf-es messages go on
 * the wire, and how a ConnectError, the error type every handler and caller works with, travels as a
 * gRPC status with metadata.
 */

/** Largest message either side accepts: a 10 MiB receipt file plus its envelope fits. */
export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/**
 * Options every server and channel shares. Channelz (grpc-js's per-call introspection counters) is
 * off: nothing reads it, and it costs ≈ 7 % of a call's CPU.
 */
export const SHARED_GRPC_OPTIONS = {
  "grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
  "grpc.max_send_message_length": MAX_MESSAGE_BYTES,
  "grpc.enable_channelz": 0,
} as const;

/** The gRPC path of a method: `/package.Service/Method`. */
export const methodPath = (method: DescMethod): string => `/${method.parent.typeName}/${method.name}`;

/** Serializes a message, or the init shape of one (handlers and callers may pass plain objects). */
export function serializerOf<S extends DescMessage>(schema: S): (value: unknown) => Buffer {
  return (value) => {
    const bytes = toBinary(schema, isMessage(value, schema) ? value : create(schema, value as never));
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

export function deserializerOf<S extends DescMessage>(schema: S): (bytes: Buffer) => MessageShape<S> {
  return (bytes) => fromBinary(schema, bytes);
}

// Only our own metadata crosses a hop: the public error code and its field details (errors.ts).
export const CARRIED_METADATA = /^pgw-/;

/** A handler's ConnectError as the status a grpc-js server answers with. */
export function statusOf(err: ConnectError): grpc.StatusObject {
  const metadata = new grpc.Metadata();
  err.metadata.forEach((value, key) => {
    if (CARRIED_METADATA.test(key)) metadata.set(key, value);
  });
  return { code: err.code as number as grpc.status, details: err.rawMessage, metadata };
}
