import { z } from 'zod';
import type { AccountService, Account } from '../accounts/account-service';
import type { Catalog } from '../catalog/catalog';
import type { HistoryRepository } from '../history/history-repository';
import { parseUsageQuery } from '../history/usage';
import type { CircuitBreakers } from '../routing/circuit-breaker';
import { upstreamsView, type UpstreamView } from '../routing/upstreams-view';
import { microToCredits } from '../shared/money';
import { PageRule } from '../shared/page-rule';
import { oneLineLabel, parseInput } from '../shared/validate';
import { integerTextOrNumber } from '../shared/integer-text';
import { DELIVERY_PAGE, type DeliveryRecord } from '../webhooks/delivery-log';
import type { WebhookRepository } from '../webhooks/webhook-repository';
import type { AccountSummary, OperatorRepository } from './operator-repository';

/** The account list's page bounds: `first` 1 to 100 (20), `after` an account id. */
export const ACCOUNT_PAGE = new PageRule(100, 20, { pattern: /^acct_[A-Za-z0-9]{1,64}$/, of: 'an account' });

const searchInput = z.object({ search: oneLineLabel(z.string().trim().max(255)).optional() }).strict();
const deliveriesInput = z
  .object({
    keyId: z.string().max(100).optional(),
    jobId: z.string().max(100).optional(),
    limit: integerTextOrNumber(1, DELIVERY_PAGE.max).default(DELIVERY_PAGE.max),
  })
  .strict();

export interface AccountPage {
  accounts: AccountSummary[];
  hasNextPage: boolean;
  endCursor: string | null;
}

/** One UTC day of the business: credits sold (purchases) and credits spent (charges net of refunds). */
export interface DailyTotal {
  day: string;
  sold: number;
  spent: number;
}

const DAY_MS = 86_400_000;

/** Every UTC day from `from` to `to`, both included. */
function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/** What operators read, for both doors; each read checks its input once, here. */
export class OperatorReads {
  constructor(
    private readonly deps: {
      operators: OperatorRepository;
      accounts: AccountService;
      history: HistoryRepository;
      webhooks: Pick<WebhookRepository, 'listDeliveries'>;
      catalog: Catalog;
      breakers: CircuitBreakers;
    },
  ) {}

  /** `{ search?, first?, after? }`: newest first; a search matches an account id exactly or a subject in part. */
  async accounts(input: Record<string, unknown>): Promise<AccountPage> {
    const { search, ...page } = input;
    const { first, after } = ACCOUNT_PAGE.check(page);
    // A blank search is no search: the list of every account.
    const given = typeof search === 'string' && search.trim() === '' ? undefined : search;
    const v = parseInput(searchInput, given === undefined ? {} : { search: given });
    const rows = await this.deps.operators.searchAccounts({ search: v.search, after, limit: first + 1 });
    const accounts = rows.slice(0, first);
    return { accounts, hasNextPage: rows.length > first, endCursor: accounts.at(-1)?.id ?? null };
  }

  /** Any account, by id: not_found_error when there is none. */
  account(accountId: string): Promise<Account> {
    return this.deps.accounts.get(accountId);
  }

  /** `{ keyId?, jobId?, limit? }`: the delivery log, newest first, of a key, a job, or both (500 attempts unless `limit` says fewer). */
  deliveries(input: Record<string, unknown>): Promise<DeliveryRecord[]> {
    // Strict as /account's queries are: a misspelt filter (`keyid=`) would list every delivery.
    const q = parseInput(deliveriesInput, input);
    return this.deps.webhooks.listDeliveries({ keyId: q.keyId || undefined, jobId: q.jobId || undefined, limit: q.limit });
  }

  upstreams(): UpstreamView[] {
    return upstreamsView(this.deps.catalog.data, this.deps.breakers).data;
  }

  /** `{ from?, to? }` (UTC days, both included; by default the 30 days ending today): every day, zeros included. */
  async dailyTotals(input: Record<string, unknown>, now = new Date()): Promise<{ from: string; to: string; days: DailyTotal[] }> {
    const { from, to } = parseUsageQuery(input, now);
    const range = { since: `${from}T00:00:00Z`, until: new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS).toISOString() };
    const [spent, sold] = await Promise.all([this.deps.history.spending(null, { ...range, groupBy: 'day' }), this.deps.operators.soldPerDay(range)]);
    const spentBy = new Map(spent.map((b) => [b.day, b.credits]));
    const soldBy = new Map(sold.map((s) => [s.day, microToCredits(s.soldMicro)]));
    return { from, to, days: daysOf(from, to).map((day) => ({ day, sold: soldBy.get(day) ?? 0, spent: spentBy.get(day) ?? 0 })) };
  }
}
