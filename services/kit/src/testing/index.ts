export * from "./infra";
export * from "./nats-server";
