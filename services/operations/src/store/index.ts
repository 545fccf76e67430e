export * from "./operations";
