import type { SqlExecutor } from '../ports/database';
import { DomainError, insufficientCredits } from '../errors/domain-error';
import { secondsUntilNextUtcMidnight, utcDay } from '../shared/time';

/**
 * The only code that touches balances. Every change is a ledger entry written in the same
 * transaction as a conditional balance UPDATE, so the balance always equals the sum of the
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

async function appendEntry(
  tx: SqlExecutor,
  e: { accountId: string; amountMicro: number; kind: EntryKind; reference?: string | null; keyId?: string | null; reason?: string | null; model?: string | null },
): Promise<void> {
  await tx.run(
    `insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, reason, model) values (?, ?, ?, ?, ?, ?, ?)`,
    [e.accountId, e.amountMicro, e.kind, e.reference ?? null, e.keyId ?? null, e.reason ?? null, e.model ?? null],
  );
}

/** Adds `amountMicro` (>= 0) to a key's spend for today, refusing when it would pass the cap. */
async function addDailySpend(tx: SqlExecutor, key: SpendingKey, amountMicro: number, now: Date): Promise<void> {
  const day = utcDay(now);
  if (key.dailySpendCapMicro === null) {
    await tx.run(
      `insert into key_daily_spend (api_key_id, day, spent_micro) values (?, ?, ?)
       on conflict (api_key_id, day) do update set spent_micro = key_daily_spend.spent_micro + excluded.spent_micro`,
      [key.id, day, amountMicro],
    );
    return;
  }
  const touched = amountMicro > key.dailySpendCapMicro
    ? 0
    : await tx.run(
        `insert into key_daily_spend (api_key_id, day, spent_micro) values (?, ?, ?)
         on conflict (api_key_id, day) do update set spent_micro = key_daily_spend.spent_micro + excluded.spent_micro
         where key_daily_spend.spent_micro + excluded.spent_micro <= ?`,
        [key.id, day, amountMicro, key.dailySpendCapMicro],
      );
  if (touched === 0) throw dailyCapExceeded(now);
}

function dailyCapExceeded(now: Date): DomainError {
  return new DomainError('daily_cap_exceeded', 'This request would pass the daily spend cap of this API key.', {
    retryAfterSeconds: secondsUntilNextUtcMidnight(now),
  });
}

async function reduceDailySpend(tx: SqlExecutor, keyId: string, day: string, amountMicro: number): Promise<void> {
  if (amountMicro <= 0) return;
  await tx.run(`update key_daily_spend set spent_micro = greatest(0, spent_micro - ?) where api_key_id = ? and day = ?`, [amountMicro, keyId, day]);
}

/** Debits the balance only when it covers the amount; throws insufficient_credits otherwise. */
async function debit(tx: SqlExecutor, accountId: string, amountMicro: number): Promise<void> {
  const touched = await tx.run(
    `update accounts set balance_micro = balance_micro - ? where id = ? and balance_micro >= ?`,
    [amountMicro, accountId, amountMicro],
  );
  if (touched === 0) throw insufficientCredits();
}

async function credit(tx: SqlExecutor, accountId: string, amountMicro: number): Promise<void> {
  await tx.run(`update accounts set balance_micro = balance_micro + ? where id = ?`, [amountMicro, accountId]);
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

/** Charges in full (images, videos, motion control). */
export async function charge(tx: SqlExecutor, input: ChargeInput): Promise<void> {
  if (input.amountMicro <= 0) return;
  const now = input.now ?? new Date();
  await addDailySpend(tx, input.key, input.amountMicro, now);
  await debit(tx, input.accountId, input.amountMicro);
  await appendEntry(tx, { ...input, amountMicro: -input.amountMicro, kind: 'charge', keyId: input.key.id });
}

/**
 * Reverses the charge made under `reference` exactly once. A second call (a retry, a restarted
 * worker) finds the unique refund entry and does nothing. Answers whether this call refunded.
 */
export async function refundOnce(tx: SqlExecutor, input: { accountId: string; reference: string; reason: string }): Promise<boolean> {
  const charged = await tx.one<{ amount: string | number | null; key_id: string | null; day: string | null; model: string | null }>(
    `select -sum(amount_micro) as amount, max(api_key_id) as key_id, to_char(min(created_at) at time zone 'UTC', 'YYYY-MM-DD') as day,
            max(model) as model
       from ledger_entries where kind = 'charge' and reference = ? and account_id = ?`,
    [input.reference, input.accountId],
  );
  const amount = Number(charged?.amount ?? 0);
  if (amount <= 0) return false;
  const inserted = await tx.run(
    `insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, reason, model)
     values (?, ?, 'refund', ?, ?, ?, ?) on conflict do nothing`,
    [input.accountId, amount, input.reference, charged?.key_id ?? null, input.reason, charged?.model ?? null],
  );
  if (inserted === 0) return false;
  if (charged?.key_id && charged.day) await reduceDailySpend(tx, charged.key_id, charged.day, amount);
  await credit(tx, input.accountId, amount);
  return true;
}

/** An operator grant; a negative amount takes credits away but never below zero. Answers the amount applied. */
export async function grant(tx: SqlExecutor, input: { accountId: string; amountMicro: number; reason: string }): Promise<number> {
  let applied = input.amountMicro;
  if (applied < 0) {
    const row = await tx.one<{ balance_micro: string }>(`select balance_micro from accounts where id = ? for update`, [input.accountId]);
    applied = -Math.min(-applied, Number(row?.balance_micro ?? 0));
  }
  if (applied === 0) return 0;
  await tx.run(`update accounts set balance_micro = balance_micro + ? where id = ?`, [applied, input.accountId]);
  await appendEntry(tx, { accountId: input.accountId, amountMicro: applied, kind: 'grant', reason: input.reason });
  return applied;
}

/** A hold not settled within this time (the instance died mid-call) is released by the worker. */
export const HOLD_EXPIRY_SECONDS = 15 * 60;

/**
 * Reserves `amountMicro` before a call whose price is known only afterwards (chat, images). The
 * hold is a real debit, so concurrent requests can never together overdraw the balance; it also
 * schedules the `hold_expiry` work row that releases it if nobody settles it. One round trip:
 * the SQL function svc_place_hold (migration 20261122000100) does it atomically.
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
export async function settleHold(
  tx: SqlExecutor,
  input: { accountId: string; key: SpendingKey; holdId: string; actualMicro: number },
): Promise<boolean> {
  const row = await tx.one<{ settled: boolean }>(`select svc_settle_hold(?, ?, ?, ?) as settled`, [
    input.accountId,
    input.key.id,
    input.holdId,
    Math.round(input.actualMicro),
  ]);
  return row?.settled === true;
}
