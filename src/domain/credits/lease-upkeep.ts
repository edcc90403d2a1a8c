/**
 * The lease book's work on timers: idle leases (and those of a past UTC day) go back, this
 * instance says its leases are alive, the leases of instances that stopped saying so are closed
 * by whoever sees them first, and the charges the journal keeps are recorded. A pass that fails
 * is reported and the next one tries again; the timers never keep the process alive.
 */
import type { Clock, TimerHandle } from '../ports/clock';
import { systemClock } from '../shared/system-clock';
import type { LeaseStore } from './lease-store';

export interface LeaseUpkeepOptions {
  instanceId: string;
  /** A lease no call used for this long goes back (looked at every second, or sooner). */
  idleMs: number;
  /** How often this instance says its leases are alive. */
  heartbeatMs: number;
  /** A lease not heartbeated for this long is closed by whoever sees it (looked for every third of it). */
  graceSeconds: number;
  /** How often the journal is looked at (its charges recorded, a stopped instance's taken over). */
  journalReplayMs?: number;
  onError?: (what: string, err: unknown) => void;
  /** What the timers run on, and idle times are measured on (the system's by default). */
  clock?: Clock;
}

/** What the book does on its timers. */
export interface LeaseUpkeepWork {
  returnIdle(): Promise<void>;
  recordKept(): Promise<void>;
}

/** Starts the timers; answers the function that stops them. */
export function startLeaseUpkeep(store: LeaseStore, options: LeaseUpkeepOptions, book: LeaseUpkeepWork): () => void {
  const clock = options.clock ?? systemClock;
  const timers: TimerHandle[] = [];
  const every = (ms: number, work: () => Promise<void>, what: string) => {
    const t = clock.setInterval(() => void work().catch((err) => options.onError?.(what, err)), ms);
    t.unref();
    timers.push(t);
  };
  every(Math.min(1000, options.idleMs), () => book.returnIdle(), 'lease idle return');
  every(options.heartbeatMs, () => store.heartbeat(options.instanceId), 'lease heartbeat');
  every(Math.max(1000, (options.graceSeconds * 1000) / 3), () => sweepStale(store, options.graceSeconds), 'stale lease sweep');
  every(options.journalReplayMs ?? 2000, () => book.recordKept(), 'charge journal replay');
  return () => timers.forEach((t) => clock.clearInterval(t));
}

/**
 * Closes the leases whose holders have been silent past the grace (each close returns what its
 * recorded charges did not use), then forgets those holders' rows, so a row per process start
 * does not pile up with every deploy.
 */
async function sweepStale(store: LeaseStore, graceSeconds: number): Promise<void> {
  for (const id of await store.stale(graceSeconds)) await store.close(id);
  await store.forgetSilentHolders(graceSeconds);
}
