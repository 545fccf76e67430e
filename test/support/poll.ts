/**
 * Reads `read` until `done` holds for its value or `timeoutMs` has passed, and answers the last value
 * read: the assertion that follows says what was expected (for state that settles asynchronously).
 * `read` may answer at once (a counter, an array a callback fills) or a promise (a row, a metric).
 */
export async function pollUntil<T>(read: () => T | Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() >= deadline) return value;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
