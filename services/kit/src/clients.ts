import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type CallOptions, type Client } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { channelCredentials, type GrpcTls } from "./grpc-tls";
import { connectErrorOf, deserializerOf, methodPath, serializerOf, SHARED_GRPC_OPTIONS } from "./grpc-wire";
import { currentRequestId, REQUEST_ID_HEADER } from "./logger";

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  ...SHARED_GRPC_OPTIONS,
  // A restarted peer is reached again within a second (grpc-js's default backoff grows to 2 minutes).
  "grpc.initial_reconnect_backoff_ms": 100,
  "grpc.max_reconnect_backoff_ms": 1000,
};

/** `http://host:port` (how peers are configured) as a grpc-js target. */
function targetOf(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `${url.hostname}:${url.port || (url.protocol === "https:" ? 443 : 80)}`;
}

/**
 * A gRPC client (@grpc/grpc-js) of another unit, shaped like Connect's `Client<S>`: methods take a
 * message or its init shape and resolve to the answer or reject with a ConnectError. Every call has
 * a deadline (`defaultTimeoutMs` unless the caller passes `timeoutMs`), honours `signal`, and carries
 * the current request id in metadata. Streaming methods are not called between units. With `tls`
 * (the unit's loadGrpcTls) the channel is mutual TLS, whatever the URL's scheme; plaintext otherwise.
 */
export function createServiceClient<S extends DescService>(service: S, baseUrl: string, defaultTimeoutMs = 5000, tls: GrpcTls | null = null): Client<S> {
  const channel = new grpc.Client(targetOf(baseUrl), channelCredentials(tls), CHANNEL_OPTIONS);
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
    client[method.localName] = (request: unknown, options: CallOptions = {}) =>
      new Promise((resolve, reject) => {
        const { signal } = options;
        if (signal?.aborted) return reject(new ConnectError("the call was cancelled", Code.Canceled));
        const metadata = new grpc.Metadata();
        const requestId = currentRequestId();
        if (requestId) metadata.set(REQUEST_ID_HEADER, requestId);
        if (options.headers) new Headers(options.headers).forEach((value, key) => metadata.set(key, value));
        const deadline = Date.now() + (options.timeoutMs ?? defaultTimeoutMs);
        const cancel = () => call.cancel();
        const call = channel.makeUnaryRequest(path, serialize, deserialize, request, metadata, { deadline }, (err, answer) => {
          signal?.removeEventListener("abort", cancel);
          if (err) reject(connectErrorOf(err));
          else resolve(answer);
        });
        signal?.addEventListener("abort", cancel, { once: true });
      });
  }
  return client as Client<S>;
}
