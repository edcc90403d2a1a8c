/**
 * A dependency probe shared by every caller: one runs at a time, and its answer stands for
 * `maxAgeMs`. /healthz is unauthenticated and balancers, orchestrators and monitors all poll it;
 * without this each request was a database query, so a flood of health checks became a flood
 * of queries. With it the database sees at most one probe per interval, however many ask.
 */
export function sharedProbe<T>(probe: () => Promise<T>, maxAgeMs: number, now: () => number = Date.now): () => Promise<T> {
  let inFlight: Promise<T> | null = null;
  let last: { at: number; answer: T } | null = null;
  return () => {
    if (last && now() - last.at < maxAgeMs) return Promise.resolve(last.answer);
    inFlight ??= probe()
      .then((answer) => {
        last = { at: now(), answer };
        return answer;
      })
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  };
}
