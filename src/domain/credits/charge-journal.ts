import type { ChargeOutcome, ChargeRow } from './lease-store';

/**
 * Durable keeping of charges the database could not take when their call had already been
 * answered (a plain call, or a stream relayed in full or in part, while PostgreSQL was unreachable,
 * stalled, or lost the reply to a commit).
 * Such a call cannot be refused after the fact, and it must not go free: its charge is kept here
 * and recorded when the database is back. Recording is idempotent by request id, so a charge that
 * did reach the database before its connection failed is not charged twice.
 */
export interface ChargeJournal {
  /** Keeps `row` on durable storage before returning; throws when it cannot. */
  append(row: ChargeRow): void;
  /**
   * Records what is kept — this instance's charges, and those an instance that stopped left
   * behind — through `record`, and forgets what was recorded. Answers how many were recorded;
   * a failure of `record` leaves them kept for the next call.
   */
  replay(record: (rows: ChargeRow[]) => Promise<ChargeOutcome[]>): Promise<number>;
}
