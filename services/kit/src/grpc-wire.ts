import { create, fromBinary, isMessage, toBinary, type DescMessage, type DescMethod, type MessageShape } from "@bufbuild/protobuf";

/**
 * What the kit's servers (gRPC, grpc-server-stream.ts; Connect, connect-server-exchange.ts) and its
 * clients (connect-unary-call.ts) share: how protobuf-es messages go on the wire, gRPC's framing,
 * the size limit, and which metadata travels with a status.
 */

/** Largest message either side accepts: a 10 MiB receipt file plus its envelope fits. */
export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/** The gRPC path of a method: `/package.Service/Method`. */
export const methodPath = (method: DescMethod): string => `/${method.parent.typeName}/${method.name}`;

/** The message `value` is, or the one its init shape describes (handlers and callers may pass plain objects). */
export function messageOf<S extends DescMessage>(schema: S, value: unknown): MessageShape<S> {
  return isMessage(value, schema) ? value : create(schema, value as never);
}

/** Serializes a message, or the init shape of one. */
export function serializerOf<S extends DescMessage>(schema: S): (value: unknown) => Buffer {
  return (value) => {
    const bytes = toBinary(schema, messageOf(schema, value));
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

export function deserializerOf<S extends DescMessage>(schema: S): (bytes: Buffer) => MessageShape<S> {
  return (bytes) => fromBinary(schema, bytes);
}

// Only our own metadata crosses a hop (gRPC trailers, Connect headers): the public error code and its field details (errors.ts).
export const CARRIED_METADATA = /^pgw-/;

/** Copies the metadata that crosses a hop (CARRIED_METADATA) into answer headers, on either protocol. */
export function putCarriedMetadata(metadata: Headers, headers: Record<string, unknown>): void {
  metadata.forEach((value, key) => {
    if (CARRIED_METADATA.test(key)) headers[key] = value;
  });
}

/** A message as gRPC's length-prefixed frame, uncompressed. */
export function frame(message: Uint8Array): Buffer {
  const framed = Buffer.allocUnsafe(5 + message.length);
  framed[0] = 0;
  framed.writeUInt32BE(message.length, 1);
  framed.set(message, 5);
  return framed;
}

/** A call's body as it arrives: one uncompressed length-prefixed message, within MAX_MESSAGE_BYTES. */
export class FramedBody {
  private readonly chunks: Buffer[] = [];
  private size = 0;

  /** Keeps a chunk; false once the body is larger than any message either side accepts. */
  add(chunk: Buffer): boolean {
    this.size += chunk.length;
    if (this.size > MAX_MESSAGE_BYTES + 5) return false;
    this.chunks.push(chunk);
    return true;
  }

  /** The message the body holds, or null when it is not exactly one uncompressed message. */
  message(): Buffer | null {
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.size);
    return body.length >= 5 && body[0] === 0 && body.readUInt32BE(1) === body.length - 5 ? body.subarray(5) : null;
  }
}
