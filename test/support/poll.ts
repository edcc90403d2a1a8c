/**
 * Polls `read` until `done` says so, and answers that value. A wait is an assertion: when the
 * deadline passes first, it fails, naming the last value read (a wait that returned the last
 * value silently let a test whose only check was the wait pass without its condition).
 */
export async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value)) {
    if (Date.now() >= deadline) throw new Error(`pollUntil: not done within ${timeoutMs} ms; last value: ${describe(value)}`);
    await new Promise((r) => setTimeout(r, everyMs));
    value = await read();
  }
  return value;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return value.length > 500 ? `${value.slice(-500)} (last 500 characters)` : value;
  try {
    const text = JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
    if (text !== undefined) return text.length > 500 ? `${text.slice(0, 500)}…` : text;
  } catch {
    // A value with cycles (a Response): its type is enough.
  }
  return Object.prototype.toString.call(value);
}
