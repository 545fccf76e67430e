/** Verified provider callbacks, kept (their bodies sealed) once per (provider, callback id). */
import { randomUUID } from "node:crypto";
import type { Queries } from "./index";

/** Keeps a verified callback; false when this (provider, callback id) was recorded before. */
export async function recordCallback(
  tx: Queries,
  c: { providerId: string; callbackId: string; operationId: string; status: string; body: string },
): Promise<boolean> {
  const row = await tx
    .insertInto("providerCallbacks")
    .values({ id: randomUUID(), ...c })
    .onConflict((oc) => oc.columns(["providerId", "callbackId"]).doNothing())
    .returning("id")
    .executeTakeFirst();
  return row !== undefined;
}
