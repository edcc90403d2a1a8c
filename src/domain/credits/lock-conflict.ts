/**
 * A transaction PostgreSQL aborted for a lock conflict (a deadlock, a serialization failure)
 * wrote nothing, so it is safe to run again: the charge batches and lease closes are, a few
 * times, before their failure is reported.
 */
const LOCK_CONFLICT = new Set(['40P01', '40001']);

export async function retryOnLockConflict<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= attempts || !LOCK_CONFLICT.has(String((err as { code?: unknown }).code))) throw err;
    }
  }
}
