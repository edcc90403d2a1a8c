import { useEffect, useRef, useState } from 'preact/hooks';

export const credits = (n: number | null | undefined): string =>
  n === null || n === undefined ? '—' : `${n.toLocaleString('en-US', { maximumFractionDigits: 6 })} credits`;

export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString('en-GB', { timeZone: 'UTC' }) + ' UTC' : '—');

/** How far ahead `iso` is ("in 3 days", "in 5 hours", "in 12 minutes"), or null once it has passed. */
export function fromNow(iso: string, now = Date.now()): string | null {
  const ms = Date.parse(iso) - now;
  if (!(ms > 0)) return null;
  const [n, unit] =
    ms >= 2 * 86_400_000
      ? [Math.floor(ms / 86_400_000), 'day']
      : ms >= 3_600_000
        ? [Math.floor(ms / 3_600_000), 'hour']
        : [Math.max(1, Math.floor(ms / 60_000)), 'minute'];
  return `in ${n} ${unit}${n === 1 ? '' : 's'}`;
}

/**
 * One submission at a time: a second click while the first is in flight is ignored (the ref is
 * set at once; `busy`, for disabling the button, only on the next render). A form that issues a
 * secret must not issue two, of which the page might show the one not kept.
 */
export function useOneAtATime(): { busy: boolean; once: (work: () => Promise<void>) => Promise<void> } {
  const inFlight = useRef(false);
  const [busy, setBusy] = useState(false);
  const once = async (work: () => Promise<void>) => {
    if (inFlight.current) return;
    inFlight.current = true;
    setBusy(true);
    try {
      await work();
    } finally {
      inFlight.current = false;
      setBusy(false);
    }
  };
  return { busy, once };
}

export function ErrorNote({ message }: { message: string | null }) {
  return message ? (
    <p class="error" role="alert">
      {message}
    </p>
  ) : null;
}

/** Something worth saying that is not an error: announced politely, not as an alert. */
export function Notice({ message }: { message: string | null }) {
  return message ? (
    <p class="notice" role="status">
      {message}
    </p>
  ) : null;
}

/**
 * A secret the gateway shows once: read-only, selectable, with a copy button. It takes focus when
 * it appears, so a screen reader reads its label, its value and the warning at once (nothing else
 * would announce it); `onDone` hides it, and the caller puts focus where the user goes next.
 */
export function SecretOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const id = `secret-${label.replace(/\W+/g, '-').toLowerCase()}`;
  useEffect(() => input.current?.focus(), [value]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
    } catch {
      input.current?.select();
    }
  };
  return (
    <div class="secret" role="region" aria-label={`${label}, shown once`}>
      <p id={`${id}-note`}>
        <strong>Copy it now: it is shown this once.</strong>
      </p>
      <label for={id}>{label}</label>
      <div class="row">
        <input id={id} ref={input} readOnly value={value} class="mono" aria-describedby={`${id}-note`} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
