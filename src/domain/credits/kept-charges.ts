/**
 * Charges the database could not take when their call was answered (see LeaseBook.commit): kept
 * in the charge journal, on disk, or in memory when the journal cannot be written (lost only if
 * this process dies first), and recorded from there once the database answers. Recording is
 * idempotent by request id, and a charge whose lease has been closed meanwhile is a late charge
 * (paid from the balance), so replaying is always safe.
 */
import type { ChargeJournal } from './charge-journal';
import { chargeTaken, type ChargeOutcome, type ChargeRow, type LeaseStore } from './lease-store';
import type { Clock } from '../ports/clock';
import { systemClock } from '../shared/system-clock';

export interface KeptChargesOptions {
  /** Where the charges of answered calls wait while the database cannot take them. */
  journal?: ChargeJournal;
  onError?: (what: string, err: unknown) => void;
  /** A charge kept in the journal (`kept`), or recorded from it later (`recorded`, how many). */
  onJournal?: (event: 'kept' | 'recorded', detail: { requestId?: string; count?: number; err?: unknown }) => void;
  /** What how long a charge has been kept is measured on (the system's by default). */
  clock?: Clock;
}

/** How long a lease waits, unclosed, for a charge of it kept in the journal to be recorded. */
const HOLD_LEASE_FOR_JOURNAL_MS = 15 * 60_000;

export class KeptCharges {
  /** Charges the journal could not take (its disk failed). */
  private readonly inMemory: ChargeRow[] = [];
  private recording: Promise<void> | null = null;
  /** Leases with a charge kept here since the last pass that recorded everything, and since when. */
  private readonly unrecordedLeases = new Map<string, number>();
  private readonly clock: Clock;

  constructor(
    private readonly store: Pick<LeaseStore, 'record'>,
    private readonly options: KeptChargesOptions,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  /** Keeps a charge the database could not take (`err` says why), on disk when it can. */
  keep(row: ChargeRow, err: unknown): void {
    if (!this.unrecordedLeases.has(row.leaseId)) this.unrecordedLeases.set(row.leaseId, this.clock.monotonic());
    try {
      if (!this.options.journal) throw new Error('no charge journal');
      this.options.journal.append(row);
      this.options.onJournal?.('kept', { requestId: row.requestId, err });
    } catch (writeErr) {
      this.inMemory.push(row);
      this.options.onError?.('charge journal (kept in memory)', writeErr);
    }
  }

  /**
   * Whether a charge on `leaseId` is kept and not yet recorded. Its lease must not be closed
   * meanwhile: the close would charge a stream of it what it owed when last written (the
   * stream's row is still there), and the usage kept here could then only add to that. Not past
   * HOLD_LEASE_FOR_JOURNAL_MS: a charge the database keeps refusing must not hold the lease's
   * credits away from the account for good (a close from elsewhere is made exact by the
   * recording's refund anyway, svc_record_charges).
   */
  holdsChargeOn(leaseId: string): boolean {
    const since = this.unrecordedLeases.get(leaseId);
    return since !== undefined && this.clock.monotonic() - since < HOLD_LEASE_FOR_JOURNAL_MS;
  }

  /** Records what is kept (and what stopped instances left in the journal), one pass at a time. */
  record(): Promise<void> {
    this.recording ??= this.recordAll().finally(() => (this.recording = null));
    return this.recording;
  }

  private async recordAll(): Promise<void> {
    // Leases kept from before this pass; one kept during it waits for the next.
    const before = [...this.unrecordedLeases.keys()];
    let count = 0;
    if (this.inMemory.length > 0) {
      const rows = this.inMemory.splice(0);
      try {
        count += (await this.recordRows(rows)).filter(chargeTaken).length;
      } catch (err) {
        this.inMemory.unshift(...rows);
        throw err;
      }
    }
    if (this.options.journal) count += await this.options.journal.replay((rows) => this.recordRows(rows));
    for (const leaseId of before) this.unrecordedLeases.delete(leaseId);
    if (count > 0) this.options.onJournal?.('recorded', { count });
  }

  private async recordRows(rows: ChargeRow[]): Promise<ChargeOutcome[]> {
    const outcomes = await this.store.record(rows);
    const refused = outcomes.filter((o) => !chargeTaken(o)).map((o) => o.requestId);
    if (refused.length > 0) this.options.onError?.('charge journal', new Error(`charges refused (their lease is another account's): ${refused.join(', ')}`));
    return outcomes;
  }
}
