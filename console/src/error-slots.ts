import { useCallback, useMemo, useState } from 'preact/hooks';
import { describeError } from './api/client';

/**
 * A view's errors, one slot per kind of request (the balance, the usage, a page of jobs...): a
 * later success of the same kind clears its own slot, so a message never outlives its cause (the
 * gateway back in reach, a page that loaded after all) while another kind's failure still shows.
 */
export function useErrorSlots() {
  const [slots, setSlots] = useState<Record<string, string>>({});
  const set = useCallback(
    (kind: string, message: string | null) =>
      setSlots((s) => {
        if ((s[kind] ?? null) === message) return s;
        const next = { ...s };
        if (message === null) delete next[kind];
        else next[kind] = message;
        return next;
      }),
    [],
  );
  return useMemo(
    () => ({
      /** What to show: each distinct message once (two requests that failed alike say it once). */
      message: [...new Set(Object.values(slots))].join(' ') || null,
      /** The error of `kind` (null clears it). */
      set,
      /** Whether a request of `kind` failed last: its "Loading…" gives way to the view's message. */
      failing: (kind: string) => kind in slots,
      /** For `.then(…, failed(kind))`. */
      failed: (kind: string) => (err: unknown) => set(kind, describeError(err)),
      succeeded: (kind: string) => set(kind, null),
    }),
    [slots, set],
  );
}
