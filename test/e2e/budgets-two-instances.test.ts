/**
 * A key's week and month budgets across two gateway processes on one PostgreSQL and one Redis:
 * concurrent calls sent to both, by clients that retry the 429 `credits_in_flight` as told, are
 * served exactly as far as each budget goes and never past it; the rest are the 429
 * `budget_exceeded`, and both instances then show the same spend on GET /v1/key. Needs real
 * servers, so it runs in CI's second pass (DATABASE_URL and REDIS_URL set).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChildGateway, type ChildGateway } from '../support/child-gateway';
import { freePort } from '../support/free-port';
import { pollUntil } from '../support/poll';
import { postgresTemplate } from '../support/database-template';
import { createScratchDatabase } from '../../src/infra/db/scratch-database';

const shared = process.env.DATABASE_URL && process.env.REDIS_URL ? describe : describe.skip;
vi.setConfig({ testTimeout: 120_000 });

shared('budgets on two instances sharing PostgreSQL and Redis', () => {
  let a: ChildGateway | undefined;
  let b: ChildGateway | undefined;
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>> | undefined;
  let dataDir: string;

  beforeAll(async () => {
    scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_budgets', postgresTemplate());
    dataDir = mkdtempSync(join(tmpdir(), 'gw-budgets-'));
    const env = { DATABASE_URL: scratch.url, REDIS_URL: process.env.REDIS_URL, DATA_DIR: dataDir, WORKER_CONCURRENCY: '0' };
    a = await startChildGateway(env, await freePort());
    b = await startChildGateway(env, await freePort());
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await scratch?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const send = async (url: string, method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  test('week and month budgets hold exactly, whichever instance each call reaches', async () => {
    const out = await pollUntil(
      async () => a!.output() + b!.output(),
      (o) => o.includes('live key:'),
      20_000,
      50,
    );
    const idToken = /ID token:\s+(\S+)/.exec(out)![1];
    const makeKey = async (name: string, period: 'week' | 'month', credits: number) => {
      const made = await send(a!.url, 'POST', '/account/api-keys', idToken, { name, budgets: [{ period, credits }] });
      expect(made.status).toBe(201);
      return made.body.key as string;
    };
    // Images of 3 credits (flux-dev, the simulator's): 10 fit the week's 30, 7 the month's 21. With
    // the retries, each key stays under its 30 image calls a minute.
    const weekly = await makeKey('weekly', 'week', 30);
    const monthly = await makeKey('monthly', 'month', 21);

    // A client honouring Retry-After: 1 tries again once another call has been answered (or at
    // once when none is still waiting for its answer).
    let waiting = 0;
    let wakers: Array<() => void> = [];
    const anotherAnswered = () => (waiting === 0 ? Promise.resolve() : new Promise<void>((r) => wakers.push(r)));
    const answered = () => {
      waiting--;
      const wake = wakers;
      wakers = [];
      wake.forEach((w) => w());
    };
    const call = async (secret: string, i: number) => {
      for (let attempt = 0; attempt < 60; attempt++) {
        waiting++;
        const res = await send(i % 2 === 0 ? a!.url : b!.url, 'POST', '/v1/images/generations', secret, {
          model: 'flux-dev',
          prompt: `a lighthouse ${i}`,
          size: '64x64',
        });
        answered();
        if (res.status === 200) return 'served';
        if (res.body.error?.code !== 'credits_in_flight') return `${res.status} ${res.body.error?.type} ${res.body.error?.code}`;
        await anotherAnswered();
      }
      return 'gave up';
    };
    const outcomes = await Promise.all([...Array.from({ length: 14 }, (_, i) => call(weekly, i)), ...Array.from({ length: 10 }, (_, i) => call(monthly, i))]);
    const weekOutcomes = outcomes.slice(0, 14);
    const monthOutcomes = outcomes.slice(14);
    expect(weekOutcomes.filter((o) => o === 'served')).toHaveLength(10);
    expect(weekOutcomes.filter((o) => o !== 'served')).toEqual(Array(4).fill('429 budget_exceeded week_budget'));
    expect(monthOutcomes.filter((o) => o === 'served')).toHaveLength(7);
    expect(monthOutcomes.filter((o) => o !== 'served')).toEqual(Array(3).fill('429 budget_exceeded month_budget'));

    // Both instances read the same spend, within the budget; the account paid for the images served.
    for (const url of [a!.url, b!.url]) {
      const week = await send(url, 'GET', '/v1/key', weekly);
      expect(week.body).toMatchObject({ budgets: [{ period: 'week', credits: 30, spent: 30 }], spend: { week: 30 } });
      const month = await send(url, 'GET', '/v1/key', monthly);
      expect(month.body).toMatchObject({ budgets: [{ period: 'month', credits: 21, spent: 21 }], spend: { month: 21 } });
      expect(month.body.accountBalance).toBe(1000 - 51);
    }
  });
});
