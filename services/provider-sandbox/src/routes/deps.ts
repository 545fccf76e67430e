import type { LifecycleDeps } from "./lifecycle";

/** What the HTTP handlers need; built once in main.ts. */
export interface SandboxDeps extends LifecycleDeps {
  /** Aborted when the sandbox stops: held and delayed requests give up. */
  shutdown: AbortSignal;
  /** How long a create is held under an `accept: "timeout"` scenario (client gone or stop ends it sooner). */
  holdMs: number;
}
