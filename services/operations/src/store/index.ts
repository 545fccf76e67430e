/** All of the unit's persistence: nothing outside this folder runs SQL. */
export * from "./accounts";
export * from "./db";
export * from "./decisions";
export * from "./history";
export * from "./late-funds";
export * from "./operations";
export * from "./operators";
export * from "./paging";
export * from "./status-events";
export * from "./queue-sizes";
