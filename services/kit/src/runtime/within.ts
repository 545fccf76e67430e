/**
 * True when `work` succeeds within `timeoutMs`; false when it fails or is still running then.
 * Never throws: the shape of every readiness probe.
 */
export async function succeedsWithin(work: PromiseLike<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const probe = Promise.resolve(work).then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
