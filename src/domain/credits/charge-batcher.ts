/**
 * Group commit for call charges: every charge waits for the transaction that records it, and
 * the charges that arrive while transactions commit go together in the next. Under load a
 * commit carries several calls; alone, a call waits for one commit, as before.
 *
 * Up to `maxCommits` transactions are in flight at once (CHARGE_COMMITS_IN_FLIGHT, default 1).
 * With one, calls queue behind the commit ahead of theirs; with more, batches are smaller and
 * commits more numerous, which on the 2-core bench machine (PostgreSQL sharing the cores) cost
 * more than the queueing did. Concurrent batches lock leases in id order, so they wait for each
 * other rather than deadlock; a rare cycle through an account row (charges above their lease) is
 * aborted by PostgreSQL and retried.
 */
import type { Clock } from '../ports/clock';
import { withinDeadline } from '../shared/deadline';
import { sleepOn, systemClock } from '../shared/system-clock';
import type { ChargeOutcome, ChargeRow, LeaseStore } from './lease-store';
import { retryOnLockConflict } from './lock-conflict';

class ChargeDeadlineExceeded extends Error {
  constructor(ms: number) {
    super(`the charge transaction did not answer within ${ms} ms`);
  }
}

/** Bounds one transaction's size (and its JSON parameter). */
const MAX_BATCH = 256;

interface Pending {
  row: ChargeRow;
  resolve: (outcome: ChargeOutcome) => void;
  reject: (err: unknown) => void;
}

export class ChargeBatcher {
  private queue: Pending[] = [];
  private inFlight = 0;
  /** Calls and commits, for the bench and the logs. */
  readonly stats = { charges: 0, commits: 0 };

  /** Whether other calls are on their way to a charge (worth waiting for); by default, never. */
  private othersInFlight: () => boolean = () => false;

  constructor(
    private readonly store: LeaseStore,
    /**
     * How long the first charge of a batch waits for others, when others are in flight. 0 suits
     * a database across a socket, where calls pile up while a commit travels; an embedded
     * database commits on this thread, so nothing can arrive meanwhile, and a short wait is what
     * lets calls share a commit. A lone call never waits.
     */
    private readonly lingerMs = 0,
    /** Transactions in flight at once: 1 for an embedded database (one thread runs them all anyway). */
    private readonly maxCommits = 1,
    /**
     * How long a batch's calls wait for its transaction (0: as long as it takes). A database
     * that stops answering (a stall, a partition: the socket does not fail for minutes) would
     * otherwise hold every call behind it; past this its calls are told the charge failed, and
     * those already answered keep it in the journal. The transaction may still commit later:
     * recording is idempotent by request id, so the journal's replay then finds it recorded.
     */
    private readonly answerWithinMs = 0,
    /** What the linger and the deadline are timed on. */
    private readonly clock: Clock = systemClock,
  ) {}

  lingerWhile(othersInFlight: () => boolean): void {
    this.othersInFlight = othersInFlight;
  }

  record(row: ChargeRow): Promise<ChargeOutcome> {
    return new Promise<ChargeOutcome>((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      if (this.inFlight < this.maxCommits) void this.flush();
    });
  }

  private withinDeadline<T>(work: Promise<T>): Promise<T> {
    if (this.answerWithinMs <= 0) return work;
    // A transaction given up on settles later, unobserved: its outcome is the database's to keep.
    return withinDeadline(work, this.answerWithinMs, () => new ChargeDeadlineExceeded(this.answerWithinMs), this.clock);
  }

  private async flush(): Promise<void> {
    this.inFlight++;
    if (this.lingerMs > 0 && this.othersInFlight()) await sleepOn(this.clock, this.lingerMs);
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        try {
          const outcomes = await this.withinDeadline(retryOnLockConflict(() => this.store.record(batch.map((p) => p.row))));
          this.stats.charges += batch.length;
          this.stats.commits++;
          const byRequest = new Map(outcomes.map((o) => [o.requestId, o]));
          for (const p of batch) {
            const outcome = byRequest.get(p.row.requestId);
            if (outcome) p.resolve(outcome);
            else p.reject(new Error(`charge ${p.row.requestId} missing from its batch`));
          }
        } catch (err) {
          // A transaction that did not answer in time means a database that is not answering:
          // the charges queued behind it are given up on now too, rather than each batch
          // waiting out a deadline of its own (ten streams behind one stalled charge waited 10 s).
          const givenUp = err instanceof ChargeDeadlineExceeded ? this.queue.splice(0) : [];
          for (const p of [...batch, ...givenUp]) p.reject(err);
        }
      }
    } finally {
      this.inFlight--;
    }
  }
}
