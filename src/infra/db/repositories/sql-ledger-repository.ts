import type { SqlExecutor } from '../../../domain/ports/database';
import type { Debit, GrantInput, LedgerRepository, Shortfall } from '../../../domain/credits/ledger-repository';

/** svc_charge's and svc_place_hold's status: 0 done, 1 the balance is short, 2, 3, 4 the key's day's, week's, month's budget is. */
const SHORTFALLS: Record<number, Shortfall> = { 1: 'balance', 2: 'daily_cap', 3: 'week_budget', 4: 'month_budget' };
const shortfallOf = (status: number): Shortfall | null => SHORTFALLS[status] ?? null;

/** The ledger's SQL: one call of a database function (src/infra/db/functions) per operation, in the caller's transaction. */
export class SqlLedgerRepository implements LedgerRepository {
  async charge(tx: SqlExecutor, debit: Debit & { reason: string | null }): Promise<Shortfall | null> {
    const row = await tx.one<{ status: number }>(`select svc_charge(?, ?, ?, ?, ?, ?, ?, ?, ?) as status`, [
      debit.accountId,
      debit.keyId,
      debit.budgets.day,
      debit.budgets.week,
      debit.budgets.month,
      debit.amountMicro,
      debit.reference,
      debit.reason,
      debit.model,
    ]);
    return shortfallOf(Number(row?.status));
  }

  async refundOnce(tx: SqlExecutor, input: { accountId: string; reference: string; reason: string }): Promise<boolean> {
    const row = await tx.one<{ refunded: boolean }>(`select svc_refund_once(?, ?, ?) as refunded`, [input.accountId, input.reference, input.reason]);
    return row?.refunded === true;
  }

  async grant(tx: SqlExecutor, input: GrantInput): Promise<number> {
    const row = await tx.one<{ applied: string | number }>(`select svc_grant(?, ?, ?, ?) as applied`, [
      input.accountId,
      input.amountMicro,
      input.reason,
      input.reference ?? null,
    ]);
    return Number(row?.applied ?? 0);
  }

  async removeCredits(
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

  async placeHold(tx: SqlExecutor, hold: Debit & { expirySeconds: number; expiryPayload: unknown }): Promise<Shortfall | null> {
    const row = await tx.one<{ status: number }>(`select svc_place_hold(?, ?, ?, ?, ?, ?, ?, ?::date, ?, ?::jsonb, ?) as status`, [
      hold.accountId,
      hold.keyId,
      hold.budgets.day,
      hold.budgets.week,
      hold.budgets.month,
      hold.amountMicro,
      hold.reference,
      hold.day,
      hold.expirySeconds,
      JSON.stringify(hold.expiryPayload),
      hold.model,
    ]);
    return shortfallOf(Number(row?.status));
  }

  async settleHold(tx: SqlExecutor, input: { accountId: string; keyId: string; holdId: string; actualMicro: number }): Promise<boolean> {
    const row = await tx.one<{ settled: boolean }>(`select svc_settle_hold(?, ?, ?, ?) as settled`, [
      input.accountId,
      input.keyId,
      input.holdId,
      input.actualMicro,
    ]);
    return row?.settled === true;
  }
}
