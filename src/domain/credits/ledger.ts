import type { SqlExecutor } from '../ports/database';
import { DomainError, insufficientCredits } from '../errors/domain-error';
import { secondsUntilNextUtcMidnight, utcDay } from '../shared/time';

/**
 * The only code that touches balances, by calling the SQL functions where the money rules live
 * (src/infra/db/functions): every change is a ledger entry written in the
 * same transaction as a conditional balance UPDATE, so the balance always equals the sum of the
 * entries and can never go below zero, however many requests race.
 *
 * Every function takes the transaction it runs in: callers compose a charge with the job row
 * and the outbox rows it pays for, so they commit or roll back together.
 *
 * Lock order, everywhere: the key's daily-spend row first, then the account row. One order
 * means two transactions of one account can never deadlock on each other.
 */

export type EntryKind = 'grant' | 'charge' | 'refund' | 'hold' | 'release' | 'lease' | 'lease_return';

export interface SpendingKey {
  id: string;
  /** Credits per UTC day for this key, in micro-credits; null means no cap. */
  dailySpendCapMicro: number | null;
}

export function dailyCapExceeded(now: Date): DomainError {
  return new DomainError('daily_cap_exceeded', 'This request would pass the daily spend cap of this API key.', {
    retryAfterSeconds: secondsUntilNextUtcMidnight(now),
  });
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

/**
 * Charges in full (videos, motion control), in the caller's transaction; one round trip
 * (svc_charge). The day it counts on is the database's: the day sent
 * is not read, and `now` only dates the 429's Retry-After.
 */
export async function charge(tx: SqlExecutor, input: ChargeInput): Promise<void> {
  if (input.amountMicro <= 0) return;
  const now = input.now ?? new Date();
  const row = await tx.one<{ status: number }>(`select svc_charge(?, ?, ?, ?, ?, ?, ?, ?::date) as status`, [
    input.accountId,
    input.key.id,
    input.key.dailySpendCapMicro,
    input.amountMicro,
    input.reference,
    input.reason ?? null,
    input.model ?? null,
    utcDay(now),
  ]);
  const status = Number(row?.status);
  if (status === 1) throw insufficientCredits();
  if (status === 2) throw dailyCapExceeded(now);
}

/**
 * Reverses the charge made under `reference` exactly once. A second call (a retry, a restarted
 * worker) finds the unique refund entry and does nothing. Answers whether this call refunded.
 */
export async function refundOnce(tx: SqlExecutor, input: { accountId: string; reference: string; reason: string }): Promise<boolean> {
  const row = await tx.one<{ refunded: boolean }>(`select svc_refund_once(?, ?, ?) as refunded`, [input.accountId, input.reference, input.reason]);
  return row?.refunded === true;
}

/** An operator grant; a negative amount takes credits away but never below zero. Answers the amount applied. */
export async function grant(tx: SqlExecutor, input: { accountId: string; amountMicro: number; reason: string }): Promise<number> {
  const row = await tx.one<{ applied: string | number }>(`select svc_grant(?, ?, ?) as applied`, [input.accountId, input.amountMicro, input.reason]);
  return Number(row?.applied ?? 0);
}

/**
 * An operator's removal of `amountMicro` (positive): what the balance holds is taken at once, and
 * what that leaves of the amount is taken from the account's open credit leases as each closes
 * (svc_remove_credits and svc_close_lease). Answers what was taken now
 * and what is still waiting on leases.
 */
export async function removeCredits(
  tx: SqlExecutor,
  input: { accountId: string; amountMicro: number; reason: string },
): Promise<{ takenMicro: number; pendingMicro: number }> {
  const row = await tx.one<{ taken: string | number; pending: string | number }>(`select taken, pending from svc_remove_credits(?, ?, ?)`, [
    input.accountId,
    input.amountMicro,
    input.reason,
  ]);
  return { takenMicro: Number(row?.taken ?? 0), pendingMicro: Number(row?.pending ?? 0) };
}

/** A hold not settled within this time (the instance died mid-call) is released by the worker. */
export const HOLD_EXPIRY_SECONDS = 15 * 60;

/**
 * Reserves `amountMicro` before a call whose price is known only afterwards (chat, images). The
 * hold is a real debit, so concurrent requests can never together overdraw the balance; it also
 * schedules the `hold_expiry` work row that releases it if nobody settles it. One round trip:
 * the SQL function svc_place_hold does it atomically.
 */
export async function placeHold(tx: SqlExecutor, input: ChargeInput): Promise<void> {
  const now = input.now ?? new Date();
  const row = await tx.one<{ status: number }>(`select svc_place_hold(?, ?, ?, ?, ?, ?::date, ?, ?::jsonb, ?) as status`, [
    input.accountId,
    input.key.id,
    input.key.dailySpendCapMicro,
    input.amountMicro,
    input.reference,
    utcDay(now),
    HOLD_EXPIRY_SECONDS,
    JSON.stringify({ accountId: input.accountId, keyId: input.key.id }),
    input.model ?? null,
  ]);
  const status = Number(row?.status);
  if (status === 1) throw insufficientCredits();
  if (status === 2) throw dailyCapExceeded(now);
}

/**
 * Ends a hold: releases it and charges the actual amount (at most the hold), once, and drops its
 * expiry row. Answers false when the hold was already settled (e.g. by the expiry sweeper).
 */
export async function settleHold(tx: SqlExecutor, input: { accountId: string; key: SpendingKey; holdId: string; actualMicro: number }): Promise<boolean> {
  const row = await tx.one<{ settled: boolean }>(`select svc_settle_hold(?, ?, ?, ?) as settled`, [
    input.accountId,
    input.key.id,
    input.holdId,
    Math.round(input.actualMicro),
  ]);
  return row?.settled === true;
}
