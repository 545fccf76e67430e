/**
 * Allocation lifecycle. An allocation is an operation placed at a provider:
 *
 *   (none) ──Allocate accepted──▶ active ──callback──▶ completed | declined | expired
 *   (none) ──Release──▶ released (tombstone, no provider)
 *   active ──Release──▶ released (cancelled at the provider, best effort)
 *
 * A later provider fact (callback) is recorded on active and released allocations; terminal
 * provider statuses stay as first reported.
 */

export type AllocationStatus = "active" | "released" | "completed" | "declined" | "expired";
export type ProviderStatus = "completed" | "declined" | "expired";
export const PROVIDER_STATUSES: readonly ProviderStatus[] = ["completed", "declined", "expired"];

export function isProviderStatus(value: unknown): value is ProviderStatus {
  return typeof value === "string" && (PROVIDER_STATUSES as readonly string[]).includes(value);
}

/** What Allocate does on finding a row for the operation: answer it again, or refuse (cancelled). */
export function allocateOnExisting(status: string): "answer" | "cancelled" {
  return status === "released" ? "cancelled" : "answer";
}

/** What Release does, given the operation's allocation status (undefined: no row yet). */
export function releaseAction(status: string | undefined): "tombstone" | "release" | "already_released" | "terminal" {
  if (status === undefined) return "tombstone";
  if (status === "active") return "release";
  if (status === "released") return "already_released";
  return "terminal";
}

/** The allocation status after a provider callback. */
export function statusAfterCallback(current: string, reported: ProviderStatus): string {
  return current === "active" || current === "released" ? reported : current;
}
