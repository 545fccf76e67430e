import type Router from "@koa/router";
import { mountControlRoutes } from "./control";
import { mountCreateRoutes } from "./create";
import type { SandboxDeps } from "./deps";
import { mountOperationRoutes } from "./operations";

export type { SandboxDeps } from "./deps";

/** Mounts the provider API (/api/v1) and the control API (/control) on `router`. */
export function mountRoutes(router: Router, deps: SandboxDeps): void {
  mountCreateRoutes(router, deps);
  mountOperationRoutes(router, deps);
  mountControlRoutes(router, deps);
}
