import type { KeyPrincipal } from '../keys/principal';
import type { IdempotentCall } from '../idempotency/idempotency-service';
import { newId } from '../shared/ids';
import type { LeaseBook, Reservation } from './lease-book';
import type { StreamStarts } from './stream-starts';
import type { CallLog } from '../requests/call-log';
import { NO_TRACING, type Tracing } from '../ports/tracing';

export interface Hold {
  /** What the charge references: the call (a chatcmpl id, an image request id). */
  id: string;
  amountMicro: number;
  /** Test keys never touch the balance: their holds are bookkeeping only. */
  live: boolean;
  principal: KeyPrincipal;
  model: string | null;
  reservation?: Reservation;
  /** A resumed call's charge, recorded by its first run: what settling answers, without charging anything. */
  recordedMicro?: number;
  /** The call's request-log row: the charge carries it, and a hold settled without one leaves it to the writer. */
  log?: CallLog;
}

/**
 * Pay-after-the-call billing for chat and images: a hold reserves the call's most before the
 * provider is called (from the key's credit lease, so concurrent requests can never overdraw),
 * and settling records the actual charge (group-committed, before the response goes out) and
 * frees the rest. Failure settles at zero: nothing is charged for a request that failed.
 */
export class Billing {
  constructor(
    private readonly leases: LeaseBook,
    /** Streams in progress, so that one cut by this instance's death is still charged what it owed. */
    private readonly streams?: StreamStarts,
    private readonly tracing: Tracing = NO_TRACING,
  ) {}

  async hold(principal: KeyPrincipal, amountMicro: number, model: string | null = null, reference: string = newId('call'), log?: CallLog): Promise<Hold> {
    const hold: Hold = { id: reference, amountMicro, live: principal.mode === 'live', principal, model };
    if (hold.live && amountMicro > 0) hold.reservation = await this.leases.reserve(principal, amountMicro);
    // Only once reserved: a refused hold leaves its row to the door, which writes the refusal.
    if (log) {
      hold.log = log;
      log.opened();
    }
    return hold;
  }

  /**
   * The hold of a resumed call (see IdempotentCall) whose first run committed its charge under
   * `reference`, or undefined when it did not (or the call is not resumed, or a test key's).
   * Such a call is not admitted again: no rate limit, hold, cap or balance check, since its work
   * is paid for; it runs, and settling it answers the recorded charge and charges nothing more.
   */
  async resumed(principal: KeyPrincipal, call: IdempotentCall | undefined, reference: string, model: string | null): Promise<Hold | undefined> {
    if (!call?.resumed || principal.mode !== 'live') return undefined;
    const recordedMicro = await this.leases.recordedCharge(reference);
    if (recordedMicro === null) return undefined;
    return { id: reference, amountMicro: 0, live: true, principal, model, recordedMicro };
  }

  /**
   * Charges `actualMicro` — the usage the provider reported, even above the hold (the excess is
   * debited as far as the balance goes; the rest is recorded as uncollected) — and frees the
   * rest of the hold, once. Answers what the balance moved, in micro-credits (for a test key,
   * what the call would have cost). A charge the database cannot take now is kept and recorded
   * later (see LeaseBook.commit): the provider has answered, so the call is not failed over it.
   */
  async settle(hold: Hold, actualMicro: number): Promise<number> {
    const moved = await this.charge(hold, actualMicro);
    this.tracing.noteCall({ creditsMicro: moved });
    return moved;
  }

  private async charge(hold: Hold, actualMicro: number): Promise<number> {
    const cost = Math.max(0, Math.round(actualMicro));
    // The call's row: carried by the charge, or (no charge) told it may be written once the response ends.
    const log = hold.log;
    hold.log = undefined;
    try {
      if (hold.recordedMicro !== undefined) return hold.recordedMicro;
      if (!hold.live) {
        log?.charged(cost);
        return cost;
      }
      const reservation = hold.reservation;
      if (!reservation) return 0;
      hold.reservation = undefined;
      try {
        if (cost === 0) {
          this.leases.release(reservation);
          return 0;
        }
        return await this.leases.commit(reservation, cost, hold.id, hold.model, log?.carry());
      } finally {
        // Released, recorded, or kept in the journal to be: the stream's row (if any) is no longer needed.
        this.streams?.settled(hold.id);
      }
    } finally {
      log?.settled();
    }
  }

  /**
   * The call's stream has begun answering: should this instance die before it settles, the
   * lease's close charges it what `owedMicro()` said last (its prompt and what it has relayed;
   * at most its hold), as a client that left is charged.
   */
  streaming(hold: Hold, owedMicro: () => number): void {
    const lease = hold.reservation?.lease;
    if (!this.streams || !lease) return;
    const opening = { requestId: hold.id, leaseId: lease.id, accountId: lease.accountId, keyId: lease.keyId, model: hold.model };
    this.streams.started(opening, () => Math.max(0, Math.min(Math.round(owedMicro()), hold.amountMicro)));
  }
}
