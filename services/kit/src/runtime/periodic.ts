/**
 * Runs `pass` every `everyMs` in the background, never two at once (a tick that finds the last pass
 * still running is skipped); failures go to `onError`. Answers `pass` (one pass now, for callers and
 * tests) and `stop`, which waits for a pass in progress.
 */
export function runPeriodically<R>(pass: () => Promise<R>, everyMs: number, onError: (err: unknown) => void) {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = pass()
      .catch(onError)
      .finally(() => (running = undefined));
  }, everyMs);
  timer.unref();
  return {
    pass,
    async stop(): Promise<void> {
      clearInterval(timer);
      await running;
    },
  };
}
