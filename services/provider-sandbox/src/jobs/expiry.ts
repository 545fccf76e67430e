import { AppError } from "@pgw/contracts";
import { type Logger, type Stoppable } from "@pgw/kit/runtime";
import { applyEvent, type LifecycleDeps } from "../routes/lifecycle";

/**
 * Every `intervalMs`, expires the `created` operations whose requisites lapsed and calls them back.
 * Safe with several replicas: the change is a compare-and-set, so a lost race is skipped. `stop`
 * stops polling and waits for the round in progress.
 */
export function startExpiryPoller(deps: LifecycleDeps, intervalMs: number, log: Logger): Stoppable {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let round: Promise<void> = Promise.resolve();

  async function expireDue(): Promise<void> {
    for (const reference of await deps.store.dueForExpiry(deps.now())) {
      const op = await deps.store.byReference(reference);
      if (!op || stopped) continue;
      try {
        await applyEvent(deps, op, "expire");
        log.info({ reference }, "operation expired");
      } catch (err) {
        if (!(err instanceof AppError && err.code === "invalid_state")) throw err;
      }
    }
  }

  const schedule = () => {
    timer = setTimeout(() => {
      round = expireDue()
        .catch((err: unknown) => log.error({ err }, "expiry round failed"))
        .finally(() => {
          if (!stopped) schedule();
        });
    }, intervalMs);
  };
  schedule();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
}
