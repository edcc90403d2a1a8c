import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Client } from 'graphql-ws';
import { execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import { subscribe } from '../api/live';
import { AccountQuery, ApiKeysQuery, JobsUpdatedSubscription, UsageQuery } from '../api/operations';
import { AccountUpdatedSubscription, CreditPriceQuery } from '../api/purchase-operations';
import type { AccountQuery as AccountResult, UsageGroupBy, UsageQuery as UsageResult } from '../gql/graphql';
import { ErrorNote, credits } from '../ui';
import { useErrorSlots } from '../error-slots';
import { UsageChart, type UsageSeries } from './usage-chart';
import { Statement } from './statement';
import { AlertNotice } from './alert-notice';

type Usage = UsageResult['usage'];

function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

/** Buckets → one series per key or model (or the total), zero on days without spending. */
function toSeries(usage: Usage, keyNames: Map<string, string>): { days: string[]; series: UsageSeries[] } {
  const days = daysBetween(usage.from, usage.to);
  const index = new Map(days.map((d, i) => [d, i]));
  const byLabel = new Map<string, number[]>();
  for (const b of usage.buckets) {
    const label =
      usage.groupBy === 'KEY'
        ? b.keyId
          ? (keyNames.get(b.keyId) ?? b.keyId)
          : 'no key'
        : usage.groupBy === 'MODEL'
          ? (b.model ?? 'unrecorded model')
          : 'Credits';
    const values = byLabel.get(label) ?? days.map(() => 0);
    values[index.get(b.day) ?? 0]! += b.credits;
    byLabel.set(label, values);
  }
  if (byLabel.size === 0)
    byLabel.set(
      'Credits',
      days.map(() => 0),
    );
  return { days, series: [...byLabel].map(([label, values]) => ({ label, values })) };
}

export function Overview({ token, live }: { token: Bearer; live: Client }) {
  const [account, setAccount] = useState<AccountResult['account'] | null>(null);
  const [usage, setUsage] = useState<Usage | null>(null);
  const [groupBy, setGroupBy] = useState<UsageGroupBy>('DAY');
  const [keyNames, setKeyNames] = useState(new Map<string, string>());
  const errors = useErrorSlots();
  const [tick, setTick] = useState(0);
  const [selling, setSelling] = useState(false);

  // The balance and usage change when a job is charged or refunded: refresh on each job event.
  useEffect(
    () =>
      subscribe(
        live,
        JobsUpdatedSubscription,
        () => setTick((t) => t + 1),
        (m) => errors.set('live', m),
      ),
    [live],
  );
  // A purchase paid or refunded moves the balance too.
  useEffect(
    () =>
      subscribe(
        live,
        AccountUpdatedSubscription,
        () => setTick((t) => t + 1),
        (m) => errors.set('live', m),
      ),
    [live],
  );
  useEffect(() => {
    // No Buy link when the gateway sells no credits (creditPrice null) or cannot say.
    execute(token, CreditPriceQuery).then(
      (d) => setSelling(d.creditPrice !== null && d.creditPrice !== undefined),
      () => setSelling(false),
    );
  }, [token]);
  useEffect(
    () =>
      live.on('connected', () => {
        errors.set('live', null);
        setTick((t) => t + 1);
      }),
    [live],
  );
  // Chat and image calls are not job events: refresh every 15 s as well while the page is shown.
  useEffect(() => {
    const timer = setInterval(() => document.visibilityState === 'visible' && setTick((t) => t + 1), 15_000);
    return () => clearInterval(timer);
  }, []);
  useEffect(() => {
    execute(token, AccountQuery).then((d) => {
      setAccount(d.account);
      errors.succeeded('account');
    }, errors.failed('account'));
  }, [token, tick]);
  useEffect(() => {
    execute(token, UsageQuery, { groupBy }).then((d) => {
      setUsage(d.usage);
      errors.succeeded('usage');
    }, errors.failed('usage'));
  }, [token, groupBy, tick]);
  useEffect(() => {
    execute(token, ApiKeysQuery).then(
      (d) => setKeyNames(new Map(d.apiKeys.map((k) => [k.id, k.name]))),
      () => undefined,
    );
  }, [token]);

  const chart = useMemo(() => (usage ? toSeries(usage, keyNames) : null), [usage, keyNames]);
  const total = usage?.buckets.reduce((s, b) => s + b.credits, 0) ?? 0;

  return (
    <>
      <ErrorNote message={errors.message} />
      {account && <AlertNotice token={token} accountId={account.id} tick={tick} />}
      <section class="stats" aria-label="Account">
        <div class="stat">
          <span class="label">Balance</span>
          <span class="value" data-testid="balance">
            {account ? credits(account.balance) : '…'}
          </span>
          {selling && (
            <a href="#/purchases" class="buy-link">
              Buy credits
            </a>
          )}
        </div>
        <div class="stat">
          <span class="label">Membership</span>
          <span class="value">{account ? (account.member ? 'Member' : 'Not a member') : '…'}</span>
        </div>
        <div class="stat">
          <span class="label">Spent, last 30 days</span>
          <span class="value">{usage ? credits(total) : '…'}</span>
        </div>
      </section>
      <section class="card" aria-labelledby="usage-heading">
        <div class="row spread">
          <h2 id="usage-heading">Usage, last 30 days</h2>
          <label class="inline">
            Split by{' '}
            <select value={groupBy} onChange={(e) => setGroupBy(e.currentTarget.value as UsageGroupBy)}>
              <option value="DAY">Total</option>
              <option value="KEY">Key</option>
              <option value="MODEL">Model</option>
            </select>
          </label>
        </div>
        {!usage && !errors.failing('usage') && <p class="hint">Loading…</p>}
        {chart && usage && (
          <UsageChart days={chart.days} series={chart.series} summary={`Credits spent per day from ${usage.from} to ${usage.to}: ${total} in total.`} />
        )}
        <p class="hint">Live keys only: test keys never spend credits. A refund counts on the day of the charge it returns.</p>
      </section>
      <Statement token={token} tick={tick} keyNames={keyNames} errors={errors} />
    </>
  );
}
