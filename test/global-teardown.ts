/** Stops the embedded servers global-setup started, if it started any. */
export default async function globalTeardown(): Promise<void> {
  const infra = (globalThis as { __pgwInfra?: { stop(): Promise<void> } }).__pgwInfra;
  await infra?.stop();
}
