/**
 * A dependency probe shared by every caller: one runs at a time, and its answer stands for
 * `maxAgeMs`. /healthz is unauthenticated and balancers, orchestrators and monitors all poll it;
 * without this each request was a database query, so a flood of health checks became a flood
 * of queries. With it the database sees at most one probe per interval, however many ask.
 *
 * An answer past `maxAgeMs` but within `staleMs` is still given at once while a fresh probe runs
 * behind it (stale-while-revalidate): a check polled often then never waits for the database,
 * so a busy event loop costs it one turn instead of three (the request, the query's reply, the
 * answer). An answer older than `staleMs`, or none, waits for the probe, as a check polled
 * seldom always did; so the state reported is never more than `staleMs` behind.
 */
export function sharedProbe<T>(probe: () => Promise<T>, maxAgeMs: number, now: () => number = Date.now, staleMs = maxAgeMs): () => Promise<T> {
  let inFlight: Promise<T> | null = null;
  let last: { at: number; answer: T } | null = null;
  const refresh = (): Promise<T> =>
    (inFlight ??= probe()
      .then((answer) => {
        last = { at: now(), answer };
        return answer;
      })
      .finally(() => {
        inFlight = null;
      }));
  return () => {
    const age = last ? now() - last.at : Infinity;
    if (last && age < maxAgeMs) return Promise.resolve(last.answer);
    if (last && age < staleMs) {
      // A probe that fails is not cached: the next check past `staleMs` waits for one and sees it fail.
      refresh().catch(() => undefined);
      return Promise.resolve(last.answer);
    }
    return refresh();
  };
}
