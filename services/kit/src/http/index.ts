export * from "./http-server";
export * from "./koa-http";
export * from "./health-http";
