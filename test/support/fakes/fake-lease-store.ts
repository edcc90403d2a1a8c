/**
 * An in-memory LeaseStore: balances, leases and call charges as the SQL functions keep them, in
 * their simplest form (one period: what a key spent counts against each of its budgets). A take
 * debits the balance (up to what it holds and what the key's budgets leave) and counts the whole
 * lease against them until it closes; a close gives back
 * what the lease's charges did not use; a charge is recorded once per request id, its excess over
 * the lease debited from the balance as far as it goes; a charge of a closed lease is paid from
 * the balance, as is one of a lease the store never had (a take lost in a crash, `loseTake`:
 * status 2). `failRecords` makes the next charge batches fail as an unreachable database's do.
 */
import type { Shortfall } from '../../../src/domain/credits/ledger-repository';
import {
  CHARGE_STATUS,
  type ChargeOutcome,
  type ChargeRow,
  type LeaseGrant,
  type LeaseRequest,
  type LeaseStore,
  type PeriodAmounts,
  type StreamStart,
} from '../../../src/domain/credits/lease-store';

interface FakeLease {
  accountId: string;
  keyId: string;
  instanceId: string;
  amountMicro: number;
  closed: boolean;
}

interface FakeCharge {
  leaseId: string;
  /** Paid from the lease. */
  leasedMicro: number;
  /** Debited from the balance. */
  debitedMicro: number;
}

export class FakeLeaseStore implements LeaseStore {
  private readonly balances = new Map<string, number>();
  /** What each key spent today: its open leases whole, its closed leases' charges. */
  private readonly spent = new Map<string, number>();
  readonly leases = new Map<string, FakeLease>();
  readonly charges = new Map<string, FakeCharge>();
  /** How many of the next `record` calls fail. */
  failRecords = 0;

  grant(accountId: string, amountMicro: number): void {
    this.balances.set(accountId, this.balance(accountId) + amountMicro);
  }

  /** The balance itself, without what open leases hold. */
  balance(accountId: string): number {
    return this.balances.get(accountId) ?? 0;
  }

  async take(request: LeaseRequest): Promise<LeaseGrant | Shortfall> {
    // One period for all three budgets here: what the key spent counts against each.
    const spent = this.spent.get(request.keyId) ?? 0;
    const left = (budget: number | null) => (budget === null ? Infinity : budget - spent);
    const { day, week, month } = request.budgets;
    const capLeft = Math.min(left(day), left(week), left(month));
    if (left(month) < request.minMicro) return 'month_budget';
    if (left(week) < request.minMicro) return 'week_budget';
    if (left(day) < request.minMicro) return 'daily_cap';
    const balance = this.balance(request.accountId);
    if (balance < request.minMicro) return 'balance';
    const amountMicro = Math.min(request.wantMicro, balance, capLeft);
    this.balances.set(request.accountId, balance - amountMicro);
    this.spent.set(request.keyId, (this.spent.get(request.keyId) ?? 0) + amountMicro);
    this.leases.set(request.id, { accountId: request.accountId, keyId: request.keyId, instanceId: request.instanceId, amountMicro, closed: false });
    return { id: request.id, amountMicro, watched: false };
  }

  /** Forgets a take as a crash of the database loses one not yet flushed: the lease gone, the balance and the key's spend as before it. */
  loseTake(leaseId: string): void {
    const lease = this.leases.get(leaseId);
    if (!lease || lease.closed) throw new Error(`no open lease ${leaseId} to lose`);
    this.leases.delete(leaseId);
    this.grant(lease.accountId, lease.amountMicro);
    this.spent.set(lease.keyId, (this.spent.get(lease.keyId) ?? 0) - lease.amountMicro);
  }

  async close(leaseId: string): Promise<number> {
    const lease = this.leases.get(leaseId);
    if (!lease || lease.closed) return -1;
    lease.closed = true;
    const back = this.unused(leaseId, lease);
    this.grant(lease.accountId, back);
    this.spent.set(lease.keyId, (this.spent.get(lease.keyId) ?? 0) - back);
    return back;
  }

  async record(rows: readonly ChargeRow[]): Promise<ChargeOutcome[]> {
    if (this.failRecords > 0) {
      this.failRecords--;
      throw Object.assign(new Error('connection terminated'), { code: '08006' });
    }
    return rows.map((row) => this.recordOne(row));
  }

  async recordedCharge(requestId: string): Promise<number | null> {
    const charge = this.charges.get(requestId);
    return charge ? charge.leasedMicro + charge.debitedMicro : null;
  }

  async writeStreamStarts(_starts: readonly StreamStart[]): Promise<void> {}
  async updateStreamsOwed(_items: ReadonlyArray<{ requestId: string; owedMicro: number }>): Promise<void> {}
  async forgetStreamStarts(_requestIds: readonly string[]): Promise<void> {}
  async heartbeat(_instanceId: string): Promise<void> {}

  async stale(_graceSeconds: number): Promise<string[]> {
    return [];
  }

  async forgetSilentHolders(_graceSeconds: number): Promise<number> {
    return 0;
  }

  async fundsWhateverSettles(accountId: string, keyId: string | null): Promise<{ balanceMicro: number; keySpentMicro: PeriodAmounts }> {
    const open = [...this.leases.entries()].filter(([, l]) => !l.closed);
    const held = (which: Array<[string, FakeLease]>) => which.reduce((sum, [id, l]) => sum + this.unused(id, l), 0);
    const committed = keyId === null ? 0 : (this.spent.get(keyId) ?? 0) - held(open.filter(([, l]) => l.keyId === keyId));
    return {
      balanceMicro: this.balance(accountId) + held(open.filter(([, l]) => l.accountId === accountId)),
      keySpentMicro: { day: committed, week: committed, month: committed },
    };
  }

  async openOf(accountId: string): Promise<number> {
    return [...this.leases.values()].filter((l) => !l.closed && l.accountId === accountId).length;
  }

  async openElsewhere(instanceId: string, accountId: string, keyId?: string): Promise<number> {
    return [...this.leases.values()].filter(
      (l) => !l.closed && l.accountId === accountId && (keyId === undefined || l.keyId === keyId) && l.instanceId !== instanceId,
    ).length;
  }

  private recordOne(row: ChargeRow): ChargeOutcome {
    if (this.charges.has(row.requestId)) return { requestId: row.requestId, status: CHARGE_STATUS.recorded, chargedMicro: 0 };
    const lease = this.leases.get(row.leaseId);
    if (lease && lease.accountId !== row.accountId) return { requestId: row.requestId, status: CHARGE_STATUS.refused, chargedMicro: 0 };
    const gone = !lease || lease.closed;
    const leasedMicro = gone ? 0 : row.leaseMicro;
    const wantedMicro = gone ? row.leaseMicro + row.excessMicro : row.excessMicro;
    const debitedMicro = Math.min(wantedMicro, this.balance(row.accountId));
    this.balances.set(row.accountId, this.balance(row.accountId) - debitedMicro);
    this.charges.set(row.requestId, { leaseId: row.leaseId, leasedMicro, debitedMicro });
    return { requestId: row.requestId, status: lease ? CHARGE_STATUS.recorded : CHARGE_STATUS.leaseLost, chargedMicro: leasedMicro + debitedMicro };
  }

  /** What the lease holds that its charges did not use. */
  private unused(leaseId: string, lease: FakeLease): number {
    let used = 0;
    for (const charge of this.charges.values()) if (charge.leaseId === leaseId) used += charge.leasedMicro;
    return lease.amountMicro - used;
  }
}
