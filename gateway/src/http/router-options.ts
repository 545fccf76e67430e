/**
 * Options of every gateway router. @koa/router matches paths ignoring case by default, while the
 * authentication guards in front of the routers compare prefixes: both must read a path the same
 * way, or /V1/… or /ADMIN/API/… would reach a handler unauthenticated. Paths match exactly as written.
 */
export const ROUTER_OPTIONS = { sensitive: true } as const;
