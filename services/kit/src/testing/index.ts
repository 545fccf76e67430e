export * from "./infra";
export * from "./nats-server";
export * from "./tracing";
