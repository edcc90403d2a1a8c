import type { DatabaseHealth } from './db-unavailable';

/** What /healthz says of the database. */
export type DatabaseState = 'up' | 'slow' | 'down';

/**
 * What one `select 1` says of the database: `up` when it answers within `timeoutMs`; `slow` when
 * it does not but nothing has failed (a stalled or overloaded server: it is not down, and a
 * balancer should not take every instance out for it, but /healthz should not call it up
 * either); `down` when it fails. `onNoAnswer` runs when it times out or fails (the probe's own
 * connection, say, to be dropped).
 */
export async function stateWithin(
  health: DatabaseHealth,
  timeoutMs: number,
  selectOne: () => Promise<unknown>,
  onNoAnswer: () => void = () => undefined,
): Promise<DatabaseState> {
  let timer: NodeJS.Timeout | undefined;
  const slow = Symbol('slow');
  const timeout = new Promise<typeof slow>((resolve) => (timer = setTimeout(() => resolve(slow), timeoutMs)));
  try {
    const answer = await Promise.race([selectOne(), timeout]);
    if (answer !== slow) return 'up';
    onNoAnswer();
    return health.isUp ? 'slow' : 'down';
  } catch {
    onNoAnswer();
    return 'down';
  } finally {
    clearTimeout(timer);
  }
}
