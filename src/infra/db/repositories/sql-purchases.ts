import type { Database, SqlExecutor } from '../../../domain/ports/database';
import type { Purchase, PurchaseStatus } from '../../../domain/purchases/purchase';
import type { PurchaseRepository, RefundState } from '../../../domain/purchases/purchase-repository';

interface Row {
  id: string;
  account_id: string;
  credits_micro: string | number;
  amount_cents: string | number;
  status: PurchaseStatus;
  created_at: Date | string;
}

const toPurchase = (r: Row): Purchase => ({
  id: r.id,
  accountId: r.account_id,
  creditsMicro: Number(r.credits_micro),
  amountCents: Number(r.amount_cents),
  status: r.status,
  created: new Date(r.created_at),
});

/** Purchases of credits (`purchases`), one row per Checkout Session. */
export class SqlPurchaseRepository implements PurchaseRepository {
  constructor(private readonly db: Database) {}

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async recordPending(p: { id: string; accountId: string; creditsMicro: number; amountCents: number }): Promise<void> {
    await this.db.run(
      `insert into purchases (id, account_id, credits_micro, amount_cents, status) values (?, ?, ?, ?, 'pending') on conflict (id) do nothing`,
      [p.id, p.accountId, p.creditsMicro, p.amountCents],
    );
  }

  async claimCompletion(
    tx: SqlExecutor,
    p: { id: string; accountId: string; creditsMicro: number; amountCents: number; paymentIntent: string | null },
  ): Promise<{ creditsMicro: number; amountCents: number } | null> {
    // Concurrent deliveries: the second insert waits for the first's commit and does nothing; the
    // update that follows waits on the row's lock and, once it is released, finds it completed.
    await tx.run(
      `insert into purchases (id, account_id, credits_micro, amount_cents, status)
       select ?, a.id, ?, ?, 'pending' from accounts a where a.id = ?
       on conflict (id) do nothing`,
      [p.id, p.creditsMicro, p.amountCents, p.accountId],
    );
    const row = await tx.one<{ credits_micro: string | number; amount_cents: string | number }>(
      `update purchases set status = 'completed', payment_intent = coalesce(?, payment_intent), completed_at = now()
        where id = ? and account_id = ? and status = 'pending'
       returning credits_micro, amount_cents`,
      [p.paymentIntent, p.id, p.accountId],
    );
    return row ? { creditsMicro: Number(row.credits_micro), amountCents: Number(row.amount_cents) } : null;
  }

  async close(id: string, status: 'expired' | 'failed'): Promise<string | undefined> {
    const row = await this.db.one<{ account_id: string }>(`update purchases set status = ? where id = ? and status = 'pending' returning account_id`, [
      status,
      id,
    ]);
    return row?.account_id;
  }

  async find(accountId: string, id: string): Promise<Purchase | undefined> {
    const row = await this.db.one<Row>(
      `select id, account_id, credits_micro, amount_cents, status, created_at from purchases where id = ? and account_id = ?`,
      [id, accountId],
    );
    return row ? toPurchase(row) : undefined;
  }

  async accountOfPayment(paymentIntent: string): Promise<string | undefined> {
    const row = await this.db.one<{ account_id: string }>(`select account_id from purchases where payment_intent = ?`, [paymentIntent]);
    return row?.account_id;
  }

  async lockForRefund(tx: SqlExecutor, paymentIntent: string): Promise<RefundState | undefined> {
    const row = await tx.one<{
      id: string;
      account_id: string;
      credits_micro: string | number;
      taken_back_micro: string | number;
      shortfall_micro: string | number;
      refunded_cents: string | number;
    }>(`select id, account_id, credits_micro, taken_back_micro, shortfall_micro, refunded_cents from purchases where payment_intent = ? for update`, [
      paymentIntent,
    ]);
    return row
      ? {
          id: row.id,
          accountId: row.account_id,
          creditsMicro: Number(row.credits_micro),
          takenBackMicro: Number(row.taken_back_micro),
          shortfallMicro: Number(row.shortfall_micro),
          refundedCents: Number(row.refunded_cents),
        }
      : undefined;
  }

  async recordRefund(
    tx: SqlExecutor,
    r: { id: string; refundedCents: number; takenBackMicro: number; shortfallMicro: number; status: PurchaseStatus },
  ): Promise<void> {
    await tx.run(`update purchases set refunded_cents = ?, taken_back_micro = ?, shortfall_micro = ?, status = ? where id = ?`, [
      r.refundedCents,
      r.takenBackMicro,
      r.shortfallMicro,
      r.status,
      r.id,
    ]);
  }

  async list(accountId: string, page: { first: number; after?: string }): Promise<Purchase[]> {
    const params: unknown[] = [accountId];
    let where = 'account_id = ?';
    if (page.after) {
      // Another account's cursor finds no row, so the comparison is with null and nothing is listed.
      where += ' and (created_at, id) < (select created_at, id from purchases where id = ? and account_id = ?)';
      params.push(page.after, accountId);
    }
    params.push(page.first);
    const rows = await this.db.all<Row>(
      `select id, account_id, credits_micro, amount_cents, status, created_at from purchases where ${where} order by created_at desc, id desc limit ?`,
      params,
    );
    return rows.map(toPurchase);
  }
}
