export * from "./nats";
export * from "./outbox";
export * from "./consumer";
export * from "./reconciler";
export * from "./housekeeping";
export * from "./ordered-lanes";
export * from "./event-metrics";
export * from "./change-signals";
