import type { SqlExecutor } from '../ports/database';
import { z } from 'zod';
import { invalidRequest, notFound } from '../errors/domain-error';
import { newId } from '../shared/ids';
import type { Ledger } from '../credits/ledger';
import type { AccountRepository } from './account-repository';
import { creditAmount } from '../shared/credit-amount';
import { oneLineLabel, parseInput } from '../shared/validate';

export interface Account {
  id: string;
  issuer: string;
  subject: string;
  balanceMicro: number;
  member: boolean;
  created: Date;
  /** The balance below which the account's webhook gets `balance.low`; null: no alert. */
  lowBalanceAlertMicro: number | null;
  /** Where the account's events go (account-webhook.ts); null: nowhere. */
  webhookUrl: string | null;
}

/** Where an account's credits may sit outside its balance: this instance's and others' credit leases. */
export interface LeasedCredits {
  /** Brings the account's leases back to its balance; waits up to `withinMs` for them to close. */
  callBack(accountId: string, withinMs: number): Promise<void>;
}

/** An operator's change of credits as it commits: the account before and after it, and what was asked. */
export interface CreditAdjustment {
  before: Account;
  /** The account as the change's transaction leaves it (a removal still waiting on leases takes the rest later). */
  after: Account;
  amountMicro: number;
  reason: string;
  /** Of a removal, what the balance did not hold and the account's open leases give back as they close. */
  pendingMicro: number;
}

/**
 * Runs inside a change's transaction, after the change: what it writes (an audit entry) commits
 * with the change or not at all.
 */
export type WithinChange<C> = (tx: SqlExecutor, change: C) => Promise<void>;

/** How long a removal of credits waits for the account's leases to come back (calls in flight settle first). */
const LEASE_CALL_BACK_MS = 5_000;

/** An operator grant: signed credits (negative takes away), exact micro-credits after parsing. */
const grantInput = z.object({ credits: creditAmount({ sign: 'nonzero', max: 1e9 }), reason: oneLineLabel(z.string().trim().min(1).max(500)) }).strict();

/** What an owner may change of the account (PATCH /account): a field absent is left as it is, null clears. */
const updateInput = z.object({ lowBalanceAlert: creditAmount({ sign: 'positive', max: 1e9 }).nullable().optional() }).strict();

/** Accounts are keyed by the (issuer, subject) of a verified ID token and created on first sight. */
export class AccountService {
  constructor(
    private readonly accounts: AccountRepository,
    private readonly ledger: Ledger,
    /** Without it (tools, tests of accounts alone) a removal takes from the balance only. */
    private readonly leases?: LeasedCredits,
  ) {}

  async findOrCreate(identity: { issuer: string; subject: string }): Promise<Account> {
    return this.accounts.findOrCreate(newId('acct'), identity);
  }

  /** The account with its balance shown: credits leased to instances and not yet charged are still the account's. */
  async get(accountId: string, tx?: SqlExecutor): Promise<Account> {
    const account = await this.accounts.find(accountId, tx);
    if (!account) throw notFound(`No account with id '${accountId}'.`, 'account_not_found', ['accountId']);
    return account;
  }

  /** Member flag on or off; `within` runs in the same transaction with the account before and after. */
  async setMember(accountId: string, member: boolean, within?: WithinChange<{ before: Account; after: Account }>): Promise<Account> {
    return this.accounts.transaction(async (tx) => {
      const before = await this.get(accountId, tx);
      await this.accounts.setMember(accountId, member, tx);
      const after = await this.get(accountId, tx);
      await within?.(tx, { before, after });
      return after;
    });
  }

  /**
   * The owner's settings: `lowBalanceAlert`, credits (null clears it). A balance shown that falls
   * below it sends `balance.low` to the account's webhook, once per crossing; a new threshold is
   * armed afresh. Answers the account after it.
   */
  async update(accountId: string, input: unknown): Promise<Account> {
    const v = parseInput(updateInput, input);
    if (v.lowBalanceAlert !== undefined) await this.accounts.setLowBalanceAlert(accountId, v.lowBalanceAlert);
    return this.get(accountId);
  }

  /**
   * Operator grant (or removal, never below zero) of `{ credits, reason }`. Answers the account
   * after it. A removal takes what the balance holds at once and, for the rest, what the
   * account's open credit leases give back as they close (Ledger.removeCredits): it calls them
   * back (on every instance) and waits up to LEASE_CALL_BACK_MS for them, so "take everything"
   * leaves nothing to spend, however busy the account is. A lease whose calls outlast the wait
   * is swept when it closes, later.
   */
  async adjustCredits(accountId: string, input: unknown, within?: WithinChange<CreditAdjustment>): Promise<Account> {
    const { credits: amountMicro, reason } = parseInput(grantInput, input);
    if (amountMicro < 0) {
      const { pendingMicro } = await this.accounts.transaction(async (tx) => {
        const before = await this.get(accountId, tx);
        const removal = await this.ledger.removeCredits(tx, { accountId, amountMicro: -amountMicro, reason });
        await within?.(tx, { before, after: await this.get(accountId, tx), amountMicro, reason, pendingMicro: removal.pendingMicro });
        return removal;
      });
      if (pendingMicro > 0 && this.leases) await this.leases.callBack(accountId, LEASE_CALL_BACK_MS);
      return this.get(accountId);
    }
    return this.accounts.transaction(async (tx) => {
      const before = await this.get(accountId, tx);
      await this.ledger.grant(tx, { accountId, amountMicro, reason });
      const after = await this.get(accountId, tx);
      // Past 2^53 micro-credits a balance cannot be written exactly in JSON (or held in a JS number).
      if (after.balanceMicro > Number.MAX_SAFE_INTEGER) {
        throw invalidRequest(
          `This grant would take the balance past ${Math.floor(Number.MAX_SAFE_INTEGER / 1e6)} credits, the most an account may hold.`,
          ['credits'],
          'balance_too_large',
        );
      }
      await within?.(tx, { before, after, amountMicro, reason, pendingMicro: 0 });
      return after;
    });
  }
}
