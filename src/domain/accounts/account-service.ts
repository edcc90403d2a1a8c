import type { Database, SqlExecutor } from '../ports/database';
import { z } from 'zod';
import { invalidRequest, notFound } from '../errors/domain-error';
import { newId } from '../shared/ids';
import * as ledger from '../credits/ledger';
import { creditAmount } from '../shared/credit-amount';
import { oneLineLabel, parseInput } from '../shared/validate';

export interface Account {
  id: string;
  issuer: string;
  subject: string;
  balanceMicro: number;
  member: boolean;
  created: Date;
}

interface AccountRow {
  id: string;
  issuer: string;
  subject: string;
  balance_micro: string | number;
  member: boolean;
  created_at: Date;
}

const toAccount = (r: AccountRow): Account => ({
  id: r.id,
  issuer: r.issuer,
  subject: r.subject,
  balanceMicro: Number(r.balance_micro),
  member: r.member,
  created: new Date(r.created_at),
});

/** Where an account's credits may sit outside its balance: this instance's and others' credit leases. */
export interface LeasedCredits {
  /** Brings the account's leases back to its balance; waits up to `withinMs` for them to close. */
  callBack(accountId: string, withinMs: number): Promise<void>;
}

/** How long a removal of credits waits for the account's leases to come back (calls in flight settle first). */
const LEASE_CALL_BACK_MS = 5_000;

/** An operator grant: signed credits (negative takes away), exact micro-credits after parsing. */
const grantInput = z.object({ credits: creditAmount({ sign: 'nonzero', max: 1e9 }), reason: oneLineLabel(z.string().trim().min(1).max(500)) }).strict();

/** Accounts are keyed by the (issuer, subject) of a verified ID token and created on first sight. */
export class AccountService {
  constructor(
    private readonly db: Database,
    /** Without it (tools, tests of accounts alone) a removal takes from the balance only. */
    private readonly leases?: LeasedCredits,
  ) {}

  async findOrCreate(identity: { issuer: string; subject: string }): Promise<Account> {
    // `do update` (a no-op) rather than `do nothing` so the existing row is returned too.
    const row = await this.db.one<AccountRow>(
      `insert into accounts (id, issuer, subject) values (?, ?, ?)
       on conflict (issuer, subject) do update set issuer = excluded.issuer
       returning id, issuer, subject, balance_micro, member, created_at`,
      [newId('acct'), identity.issuer, identity.subject],
    );
    return toAccount(row!);
  }

  async get(accountId: string, tx: SqlExecutor = this.db): Promise<Account> {
    // Credits leased to instances and not yet charged are still the account's (svc_shown_balance).
    const row = await tx.one<AccountRow>(`select id, issuer, subject, member, created_at, svc_shown_balance(id) as balance_micro from accounts where id = ?`, [
      accountId,
    ]);
    if (!row) throw notFound(`No account with id '${accountId}'.`, 'account_not_found', ['accountId']);
    return toAccount(row);
  }

  async setMember(accountId: string, member: boolean): Promise<Account> {
    const touched = await this.db.run(`update accounts set member = ? where id = ?`, [member, accountId]);
    if (touched === 0) throw notFound(`No account with id '${accountId}'.`, 'account_not_found', ['accountId']);
    return this.get(accountId);
  }

  /**
   * Operator grant (or removal, never below zero) of `{ credits, reason }`. Answers the account
   * after it. A removal takes what the balance holds at once and, for the rest, what the
   * account's open credit leases give back as they close (ledger.removeCredits): it calls them
   * back (on every instance) and waits up to LEASE_CALL_BACK_MS for them, so "take everything"
   * leaves nothing to spend, however busy the account is. A lease whose calls outlast the wait
   * is swept when it closes, later.
   */
  async adjustCredits(accountId: string, input: unknown): Promise<Account> {
    const { credits: amountMicro, reason } = parseInput(grantInput, input);
    if (amountMicro < 0) {
      const { pendingMicro } = await this.db.transaction(async (tx) => {
        await this.get(accountId, tx);
        return ledger.removeCredits(tx, { accountId, amountMicro: -amountMicro, reason });
      });
      if (pendingMicro > 0 && this.leases) await this.leases.callBack(accountId, LEASE_CALL_BACK_MS);
      return this.get(accountId);
    }
    return this.db.transaction(async (tx) => {
      await this.get(accountId, tx);
      await ledger.grant(tx, { accountId, amountMicro, reason });
      const after = await this.get(accountId, tx);
      // Past 2^53 micro-credits a balance cannot be written exactly in JSON (or held in a JS number).
      if (after.balanceMicro > Number.MAX_SAFE_INTEGER) {
        throw invalidRequest(
          `This grant would take the balance past ${Math.floor(Number.MAX_SAFE_INTEGER / 1e6)} credits, the most an account may hold.`,
          ['credits'],
          'balance_too_large',
        );
      }
      return after;
    });
  }
}
