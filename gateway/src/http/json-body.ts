import { koaBody } from "koa-body";

/** Largest JSON body accepted (DESIGN.md §7); larger is 413. */
export const JSON_BODY_LIMIT = "64kb";

/** JSON body parser; mounted after authentication, so nothing is parsed for an unauthenticated call. */
export const jsonBody = () =>
  koaBody({ json: true, multipart: false, urlencoded: false, text: false, jsonLimit: JSON_BODY_LIMIT, jsonStrict: false });
