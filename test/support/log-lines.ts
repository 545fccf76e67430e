import { createLogger, writeLogsTo } from "@pgw/kit/runtime";

/** A unit's logger whose JSON lines the test reads (`lines()` writes out what is still batched first). */
export function capturedLog(unit: string, level = "debug") {
  const written: Record<string, any>[] = [];
  const log = createLogger(unit, level, { write: (text: string) => written.push(...text.trim().split("\n").map((line) => JSON.parse(line))) });
  return {
    log,
    lines: () => new Promise<Record<string, any>[]>((resolve) => log.flush(() => resolve(written))),
  };
}

/**
 * Every line the loggers created from now on write (every unit a stack starts in this process), as
 * parsed JSON, instead of stdout; `restore()` sends new loggers' lines to stdout again.
 */
export function captureAllLogLines() {
  const written: Record<string, any>[] = [];
  const restore = writeLogsTo({ write: (text: string) => written.push(...text.trim().split("\n").map((line) => JSON.parse(line))) });
  return { lines: () => written, restore };
}
