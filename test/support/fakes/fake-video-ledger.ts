import type { SqlExecutor } from '../../../src/domain/ports/database';
import type { ChargeInput } from '../../../src/domain/credits/ledger';
import type { VideoLedger } from '../../../src/domain/video/video-ledger';
import { insufficientCredits } from '../../../src/domain/errors/domain-error';
import { FakeRows, type FakeDatabase } from './fake-database';

interface Entry {
  accountId: string;
  kind: 'charge' | 'refund';
  amountMicro: number;
  reference: string;
}

/**
 * Balances and entries in memory. It refunds every time it is asked (the real ledger's once-only
 * refund is the database's, tested on it): a caller that asked twice shows as two refunds here.
 */
export class FakeVideoLedger implements VideoLedger {
  private readonly balances = new FakeRows<string, { micro: number }>();
  private readonly log = new FakeRows<number, Entry>();

  constructor(private readonly db: FakeDatabase) {
    db.table(this.balances);
    db.table(this.log);
  }

  fund(accountId: string, micro: number): void {
    this.balances.rows.set(accountId, { micro });
  }

  balance(accountId: string): number {
    return this.balances.rows.get(accountId)?.micro ?? 0;
  }

  entries(accountId: string): Entry[] {
    return [...this.log.rows.values()].filter((e) => e.accountId === accountId);
  }

  async charge(tx: SqlExecutor, input: ChargeInput): Promise<void> {
    this.db.inTransaction(tx);
    if (input.amountMicro <= 0) return;
    const balance = this.balances.rows.get(input.accountId);
    if (!balance || balance.micro < input.amountMicro) throw insufficientCredits();
    balance.micro -= input.amountMicro;
    this.log.rows.set(this.log.rows.size + 1, { accountId: input.accountId, kind: 'charge', amountMicro: -input.amountMicro, reference: input.reference });
  }

  async refundOnce(tx: SqlExecutor, input: { accountId: string; reference: string; reason: string }): Promise<boolean> {
    this.db.inTransaction(tx);
    const charged = -this.entries(input.accountId)
      .filter((e) => e.kind === 'charge' && e.reference === input.reference)
      .reduce((sum, e) => sum + e.amountMicro, 0);
    if (charged <= 0) return false;
    this.balances.rows.get(input.accountId)!.micro += charged;
    this.log.rows.set(this.log.rows.size + 1, { accountId: input.accountId, kind: 'refund', amountMicro: charged, reference: input.reference });
    return true;
  }
}
