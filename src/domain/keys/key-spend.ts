/**
 * What a key has spent in its budgets' periods, as its record and GET /v1/key show it: the
 * key's committed charges (its open leases count only what they have charged, not whole as they
 * do against the budgets) in the database's current UTC day, week and month, and when each
 * budget's period ends.
 */
import { BUDGET_PERIODS, periodEnd, type BudgetPeriod } from '../credits/budgets';
import type { PeriodAmounts } from '../credits/lease-store';
import type { AccountService } from '../accounts/account-service';
import { RATE_LIMITS, type RateGroup } from '../ratelimit/rate-limiter';
import { budgetsOf, type ApiKey } from './key-record';
import type { KeyService } from './key-service';
import type { KeyPrincipal } from './principal';

export interface KeySpendRepository {
  /** The keys' committed spend in the database's current day, week and month (svc_committed_spend), and the database's time then. */
  committedSpend(keyIds: readonly string[]): Promise<{ at: Date; spent: Map<string, PeriodAmounts> }>;
}

export interface BudgetStanding {
  period: BudgetPeriod;
  creditsMicro: number;
  spentMicro: number;
  /** The period's end: its spend starts again from 0. */
  resetsAt: Date;
}

export interface KeySpend {
  /** The key's budgets, day, week, month, those it has. */
  budgets: BudgetStanding[];
  /** Spent in each period, with or without a budget. */
  spend: PeriodAmounts;
}

/** GET /v1/key: the calling key's record, its spend, its account's balance shown and its rate limits. */
export interface KeyOverview {
  key: ApiKey;
  spending: KeySpend;
  accountBalanceMicro: number;
  /** Requests per minute per group. */
  rateLimits: Record<RateGroup, number>;
}

const NOTHING: PeriodAmounts = { day: 0, week: 0, month: 0 };

export class KeySpending {
  constructor(
    private readonly repository: KeySpendRepository,
    private readonly keys: Pick<KeyService, 'get'>,
    private readonly accounts: Pick<AccountService, 'get'>,
  ) {}

  /** The spend of each key, by id. */
  async of(keys: readonly ApiKey[]): Promise<Map<string, KeySpend>> {
    const out = new Map<string, KeySpend>();
    if (keys.length === 0) return out;
    const { at, spent } = await this.repository.committedSpend(keys.map((k) => k.id));
    for (const key of keys) {
      const spend = spent.get(key.id) ?? NOTHING;
      const budgets = budgetsOf(key);
      const standing = BUDGET_PERIODS.flatMap((period): BudgetStanding[] => {
        const credits = budgets[period];
        return credits === null ? [] : [{ period, creditsMicro: credits, spentMicro: spend[period], resetsAt: periodEnd(period, at) }];
      });
      out.set(key.id, { budgets: standing, spend });
    }
    return out;
  }

  /** The spend of one key. */
  async ofOne(key: ApiKey): Promise<KeySpend> {
    return (await this.of([key])).get(key.id)!;
  }

  /** The calling key about itself: nothing of any other key, nor of its account but the balance. */
  async overview(principal: KeyPrincipal): Promise<KeyOverview> {
    const [key, account] = await Promise.all([this.keys.get(principal.accountId, principal.keyId), this.accounts.get(principal.accountId)]);
    return { key, spending: await this.ofOne(key), accountBalanceMicro: account.balanceMicro, rateLimits: { ...RATE_LIMITS } };
  }
}
