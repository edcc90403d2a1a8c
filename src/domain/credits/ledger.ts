import type { SqlExecutor } from '../ports/database';
import { periodOfShortfall, type Debit, type GrantInput, type LedgerRepository, type Shortfall } from './ledger-repository';
import { insufficientCredits, type DomainError } from '../errors/domain-error';
import { utcDay } from '../shared/time';
import { budgetExceeded, type Budgets } from './budgets';

/**
 * The only code that touches balances, through its repository (ledger-repository.ts), whose every
 * operation calls a SQL function where the money rules live (src/infra/db/functions): every
 * change is a ledger entry written in the same transaction as a conditional balance UPDATE, so
 * the balance always equals the sum of the entries and can never go below zero, however many
 * requests race.
 *
 * Every operation takes the transaction it runs in: callers compose a charge with the job row
 * and the outbox rows it pays for, so they commit or roll back together.
 *
 * Lock order, everywhere: the key's spend rows first (its day's, its week's, its month's), then
 * the account row. One order means two transactions of one account can never deadlock on each
 * other.
 */

export type EntryKind = 'grant' | 'charge' | 'refund' | 'hold' | 'release' | 'lease' | 'lease_return';

export interface SpendingKey {
  id: string;
  /** The key's budgets per UTC period, in micro-credits (the day's is its daily cap). */
  budgets: Budgets;
}

/** The refusal a debit (a charge, a hold, a lease) gets for its shortfall; `now` dates a budget's Retry-After. */
export function shortfallError(shortfall: Shortfall, now: Date): DomainError {
  const period = periodOfShortfall(shortfall);
  return period === null ? insufficientCredits() : budgetExceeded(period, now);
}

export interface ChargeInput {
  accountId: string;
  key: SpendingKey;
  amountMicro: number;
  /** What is paid for: a job id, a hold id, an image request id. */
  reference: string;
  reason?: string;
  /** The public model id paid for, recorded on the entry (usage by model); null when unknown. */
  model?: string | null;
  now?: Date;
}

/** A hold not settled within this time (the instance died mid-call) is released by the worker. */
export const HOLD_EXPIRY_SECONDS = 15 * 60;

const debitOf = (input: ChargeInput, now: Date): Debit => ({
  accountId: input.accountId,
  keyId: input.key.id,
  budgets: input.key.budgets,
  amountMicro: input.amountMicro,
  reference: input.reference,
  model: input.model ?? null,
  day: utcDay(now),
});

export class Ledger {
  constructor(private readonly repository: LedgerRepository) {}

  /**
   * Charges in full (videos, motion control), in the caller's transaction; one round trip
   * (svc_charge). The day it counts on is the database's: the day sent
   * is not read, and `now` only dates the 429's Retry-After.
   */
  async charge(tx: SqlExecutor, input: ChargeInput): Promise<void> {
    if (input.amountMicro <= 0) return;
    const now = input.now ?? new Date();
    const shortfall = await this.repository.charge(tx, { ...debitOf(input, now), reason: input.reason ?? null });
    if (shortfall) throw shortfallError(shortfall, now);
  }

  /**
   * Reverses the charge made under `reference` exactly once. A second call (a retry, a restarted
   * worker) finds the unique refund entry and does nothing. Answers whether this call refunded.
   */
  refundOnce(tx: SqlExecutor, input: { accountId: string; reference: string; reason: string }): Promise<boolean> {
    return this.repository.refundOnce(tx, input);
  }

  /**
   * A grant (an operator's, a purchase's); a negative amount takes credits away but never below
   * zero. Answers the amount applied. With a `reference`, a positive grant is made once: a second
   * one for the same reference is refused by a unique index and rolls its transaction back.
   */
  grant(tx: SqlExecutor, input: GrantInput): Promise<number> {
    return this.repository.grant(tx, input);
  }

  /**
   * An operator's removal of `amountMicro` (positive): what the balance holds is taken at once, and
   * what that leaves of the amount is taken from the account's open credit leases as each closes
   * (svc_remove_credits and svc_close_lease). Answers what was taken now
   * and what is still waiting on leases.
   */
  removeCredits(tx: SqlExecutor, input: { accountId: string; amountMicro: number; reason: string }): Promise<{ takenMicro: number; pendingMicro: number }> {
    return this.repository.removeCredits(tx, input);
  }

  /**
   * Reserves `amountMicro` before a call whose price is known only afterwards (chat, images). The
   * hold is a real debit, so concurrent requests can never together overdraw the balance; it also
   * schedules the `hold_expiry` work row that releases it if nobody settles it. One round trip:
   * the SQL function svc_place_hold does it atomically.
   */
  async placeHold(tx: SqlExecutor, input: ChargeInput): Promise<void> {
    const now = input.now ?? new Date();
    const shortfall = await this.repository.placeHold(tx, {
      ...debitOf(input, now),
      expirySeconds: HOLD_EXPIRY_SECONDS,
      expiryPayload: { accountId: input.accountId, keyId: input.key.id },
    });
    if (shortfall) throw shortfallError(shortfall, now);
  }

  /**
   * Ends a hold: releases it and charges the actual amount (at most the hold), once, and drops its
   * expiry row. Answers false when the hold was already settled (e.g. by the expiry sweeper).
   */
  settleHold(tx: SqlExecutor, input: { accountId: string; key: SpendingKey; holdId: string; actualMicro: number }): Promise<boolean> {
    return this.repository.settleHold(tx, {
      accountId: input.accountId,
      keyId: input.key.id,
      holdId: input.holdId,
      actualMicro: Math.round(input.actualMicro),
    });
  }
}
