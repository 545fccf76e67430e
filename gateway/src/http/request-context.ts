import { currentRequestId, REQUEST_ID_HEADER, withRequestId, type Logger } from "@pgw/kit";
import type Koa from "koa";

/** Request id (taken from the caller or made here) for logs and every gRPC hop; one access log line. */
export function requestContext(log: Logger): Koa.Middleware {
  return (ctx, next) =>
    withRequestId(ctx.get(REQUEST_ID_HEADER), async () => {
      const started = process.hrtime.bigint();
      ctx.set(REQUEST_ID_HEADER, currentRequestId()!);
      try {
        await next();
      } finally {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        log.info({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10, shop_id: ctx.state.auth?.shopId }, "http request");
      }
    });
}
