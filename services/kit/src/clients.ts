import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type CallOptions, type Client } from "@connectrpc/connect";
import type { GrpcTls } from "./grpc-tls";
import { callUnary, ConnectConnection } from "./connect-unary-call";
import { deserializerOf, methodPath, serializerOf } from "./grpc-wire";
import { currentRequestId, REQUEST_ID_HEADER } from "./logger";

/**
 * A client of another unit's services, shaped like Connect's `Client<S>`: methods take a message or
 * its init shape and resolve to the answer or reject with a ConnectError. It calls in Connect's unary
 * protocol over HTTP/1.1 (connect-unary-call.ts), on the port where the unit also serves gRPC. Every
 * call has a deadline (`defaultTimeoutMs` unless the caller passes `timeoutMs`), honours `signal`,
 * and carries the current request id in metadata. Streaming methods are not called between units.
 * With `tls` (the unit's loadGrpcTls) the connection is mutual TLS, whatever the URL's scheme.
 */
export function createServiceClient<S extends DescService>(service: S, baseUrl: string, defaultTimeoutMs = 5000, tls: GrpcTls | null = null): Client<S> {
  const connection = new ConnectConnection(baseUrl, tls);
  const client: Record<string, unknown> = {};
  for (const method of service.methods) {
    if (method.methodKind !== "unary") {
      client[method.localName] = () => {
        throw new ConnectError(`${method.name}: the kit's client makes unary calls only`, Code.Unimplemented);
      };
      continue;
    }
    const path = methodPath(method);
    const serialize = serializerOf(method.input);
    const deserialize = deserializerOf(method.output);
    client[method.localName] = async (request: unknown, options: CallOptions = {}) => {
      const metadata: Record<string, string> = {};
      if (options.headers) new Headers(options.headers).forEach((value, key) => (metadata[key] = value));
      const requestId = currentRequestId();
      if (requestId) metadata[REQUEST_ID_HEADER] = requestId;
      const deadline = Date.now() + (options.timeoutMs ?? defaultTimeoutMs);
      return deserialize(await callUnary(connection, { path, message: serialize(request), metadata, deadline, signal: options.signal }));
    };
  }
  return client as Client<S>;
}
