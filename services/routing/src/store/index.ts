/** Persistence of the routing unit. */
export * from "./allocations";
