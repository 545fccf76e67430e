import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ERROR_CODE_HEADER } from "./errors";
import { currentRequestId, REQUEST_ID_HEADER } from "./logger";

/** Client interceptor: the current request id travels in gRPC metadata. */
const propagateRequestId: Interceptor = (next) => (req) => {
  const id = currentRequestId();
  if (id && !req.header.has(REQUEST_ID_HEADER)) req.header.set(REQUEST_ID_HEADER, id);
  return next(req);
};

// Transport failures (peer down, connection reset) that connect-node sometimes reports as INTERNAL.
const NETWORK_FAILURE = /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|socket hang up|GOAWAY|NGHTTP2|session closed/i;

/** Client interceptor: a peer that cannot be reached is UNAVAILABLE (a 503 at the edge), never INTERNAL. */
const unreachableIsUnavailable: Interceptor = (next) => async (req) => {
  try {
    return await next(req);
  } catch (err) {
    const ce = ConnectError.from(err);
    const cause = ce.cause instanceof Error ? ce.cause.message : "";
    if (ce.code === Code.Internal && !ce.metadata.has(ERROR_CODE_HEADER) && NETWORK_FAILURE.test(`${ce.rawMessage} ${cause}`)) {
      throw new ConnectError(ce.rawMessage, Code.Unavailable, ce.metadata, undefined, ce);
    }
    throw err;
  }
};

/**
 * A gRPC (HTTP/2) client of another unit. Every call has a deadline: `defaultTimeoutMs` unless the
 * caller passes `timeoutMs`.
 */
export function createServiceClient<S extends DescService>(service: S, baseUrl: string, defaultTimeoutMs = 5000): Client<S> {
  const transport = createGrpcTransport({ baseUrl, defaultTimeoutMs, interceptors: [propagateRequestId, unreachableIsUnavailable] });
  return createClient(service, transport);
}
