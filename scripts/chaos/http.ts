/** One HTTP call of the chaos load: its status and JSON body, or the error when nothing answered. */
export type Answer = { status: number; body: any } | { error: string };

export async function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  try {
    const res = await fetch(url, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers: { "content-type": "application/json", ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body };
  } catch (err) {
    return { error: String((err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name ?? err) };
  }
}

/** A failure a kill may cause (nothing answered, or a 5xx): worth retrying with the same request. */
export const transient = (a: Answer) => "error" in a || a.status >= 500;
export const ok = (a: Answer): a is { status: number; body: any } => "status" in a && a.status >= 200 && a.status < 300;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
