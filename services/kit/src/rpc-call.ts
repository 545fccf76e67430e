import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { EventEmitter } from "node:events";
import { Histogram, type Registry } from "prom-client";
import { toConnectError } from "./errors";
import { withRequestId, type Logger } from "./logger";

/**
 * One call as the server runs it, whichever protocol carried it (gRPC over HTTP/2, grpc-server-
 * stream.ts, or Connect's unary protocol over HTTP/1.1, connect-server-exchange.ts): the route it
 * asked for, its handler's context, and the runner that reads, answers, measures and logs it.
 */

export type Handler = (request: unknown, context: HandlerContext) => unknown;

/** How a method's messages go on the wire in one format. */
export interface Codec {
  decode: (bytes: Buffer) => unknown;
  encode: (value: unknown) => Buffer;
}

/** One method as the server runs it. */
export interface Route {
  service: DescService;
  method: DescMethod;
  proto: Codec;
  json: Codec;
  handler: Handler;
}

/** One call on the wire: its request message, its answer, and whether the caller is still there. */
export interface Exchange {
  /** The codec the caller speaks. */
  readonly format: "proto" | "json";
  /** False once the caller has gone or the answer has ended. */
  readonly open: boolean;
  /** Emits 'close' when the call's stream or response closes (the caller gone, or the answer sent). */
  readonly closing: EventEmitter;
  /** The request's one message; rejects with the ConnectError to answer when the body is not one. */
  read(): Promise<Buffer>;
  send(message: Buffer): void;
  /** Ends the call: OK, or the error. */
  end(err?: ConnectError): void;
  /** Refuses the request at the HTTP level: it is no call of the protocol. */
  refuse(httpStatus: number): void;
}

/** Why a request cannot start a call: an HTTP status (it is no call of the protocol) or the error to answer. */
export type Refusal = { httpStatus: number } | ConnectError;

/** Answers a request refused before any handler runs. */
export function answerRefusal(exchange: Exchange, refusal: Refusal): void {
  if (refusal instanceof ConnectError) exchange.end(refusal);
  else exchange.refuse(refusal.httpStatus);
}

// A cancel this close to our deadline is the caller's own deadline passing (see CallContext).
const DEADLINE_SKEW_MS = 50;

/**
 * The part of Connect's handler context our handlers use: service, method, timeoutMs() and `signal`
 * (aborted when the caller cancels or the deadline passes). The signal is made on first use: most
 * calls never pay for an AbortController. A class, so `signal` is one getter on the prototype: a
 * getter in an object literal is a new closure per call, which V8 gives a hidden class of its own,
 * in the old generation, keeping the call's objects alive past young-generation collections.
 */
class CallContext {
  readonly service: DescService;
  readonly method: DescMethod;
  private controller: AbortController | undefined;
  private timer: NodeJS.Timeout | undefined;
  private finished = false;

  constructor(
    private readonly exchange: Exchange,
    private readonly deadlineMs: number | undefined,
    route: Route,
  ) {
    this.service = route.service;
    this.method = route.method;
  }

  timeoutMs(): number | undefined {
    return this.deadlineMs === undefined ? undefined : this.deadlineMs - Date.now();
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (!this.exchange.open) this.closed();
      else this.exchange.closing.once("close", this.closed);
      if (this.deadlineMs !== undefined) this.timer = setTimeout(() => this.abort(new ConnectError("the deadline passed", Code.DeadlineExceeded)), Math.max(0, this.deadlineMs - Date.now()));
    }
    return this.controller.signal;
  }

  /** The call is answered: nothing aborts its signal any more. */
  done(): void {
    this.finished = true;
    clearTimeout(this.timer);
    this.exchange.closing.removeListener("close", this.closed);
  }

  // The caller's own deadline passes first (ours starts when its request arrives), and it resets
  // the stream or closes the connection: a close within DEADLINE_SKEW_MS of our deadline is that deadline.
  private readonly closed = () => {
    const expired = this.deadlineMs !== undefined && Date.now() >= this.deadlineMs - DEADLINE_SKEW_MS;
    this.abort(expired ? new ConnectError("the deadline passed", Code.DeadlineExceeded) : new ConnectError("the caller cancelled", Code.Canceled));
  };

  private abort(reason: ConnectError): void {
    if (!this.finished && this.controller && !this.controller.signal.aborted) this.controller.abort(reason);
  }
}

/** Runs every call: request id from metadata, one debug line, latency metric, public error mapping. */
export function callRunner(log: Logger, registry: Registry) {
  const duration = new Histogram({
    name: "grpc_server_handling_seconds",
    help: "RPC handling time (gRPC and Connect) by method and code",
    labelNames: ["method", "code"],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
    registers: [registry],
  });
  return (exchange: Exchange, requestId: string | undefined, deadlineMs: number | undefined, route: Route): Promise<void> =>
    withRequestId(requestId, async () => {
      const name = `${route.service.typeName}/${route.method.name}`;
      const started = process.hrtime.bigint();
      const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
      const codec = route[exchange.format];
      const call = new CallContext(exchange, deadlineMs, route);
      const context = call as unknown as HandlerContext;
      try {
        const request = codec.decode(await exchange.read());
        const answer = await route.handler(request, context);
        if (route.method.methodKind === "unary") exchange.send(codec.encode(answer));
        else for await (const message of answer as AsyncIterable<unknown>) exchange.send(codec.encode(message));
        call.done();
        exchange.end();
        duration.observe({ method: name, code: "ok" }, seconds());
        if (!route.service.typeName.startsWith("grpc.health")) log.debug({ method: name, ms: seconds() * 1000 }, "rpc ok");
      } catch (err) {
        call.done();
        const ce = toConnectError(err);
        exchange.end(ce);
        duration.observe({ method: name, code: String(ce.code) }, seconds());
        log[ce.code === Code.Internal ? "error" : "info"]({ method: name, code: ce.code, message: ce.rawMessage, err: ce.cause ?? err }, "rpc failed");
      }
    });
}
