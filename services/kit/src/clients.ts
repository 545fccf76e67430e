import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { currentRequestId, REQUEST_ID_HEADER } from "./logger";

/** Client interceptor: the current request id travels in gRPC metadata. */
const propagateRequestId: Interceptor = (next) => (req) => {
  const id = currentRequestId();
  if (id && !req.header.has(REQUEST_ID_HEADER)) req.header.set(REQUEST_ID_HEADER, id);
  return next(req);
};

/**
 * A gRPC (HTTP/2) client of another unit. Every call has a deadline: `defaultTimeoutMs` unless the
 * caller passes `timeoutMs`.
 */
export function createServiceClient<S extends DescService>(service: S, baseUrl: string, defaultTimeoutMs = 5000): Client<S> {
  const transport = createGrpcTransport({ baseUrl, defaultTimeoutMs, interceptors: [propagateRequestId] });
  return createClient(service, transport);
}
