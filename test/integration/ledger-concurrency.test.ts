import { NO_BUDGETS } from '../../src/domain/credits/budgets';
import { startTestServices, type TestServices } from '../support/test-services';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { Ledger } from '../../src/domain/credits/ledger';
import { SqlLedgerRepository } from '../../src/infra/db/repositories/sql-ledger-repository';
import { creditsToMicro } from '../../src/domain/shared/money';
import { DomainError } from '../../src/domain/errors/domain-error';

let gw: TestServices;
beforeAll(async () => {
  gw = await startTestServices();
});
afterAll(() => gw.close());

const ledger = new Ledger(new SqlLedgerRepository());

const key = (id: string, capCredits: number | null = null) => ({
  id,
  budgets: { ...NO_BUDGETS, day: capCredits === null ? null : creditsToMicro(capCredits) },
});

describe('credit ledger under concurrency', () => {
  test('100 parallel charges against a balance covering 10 charge exactly 10', async () => {
    const acct = await gw.newAccount(30);
    const { db } = gw.database;
    const results = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) =>
        db.transaction((tx) => ledger.charge(tx, { accountId: acct.id, key: key('svc_live_k1'), amountMicro: creditsToMicro(3), reference: `job_${i}` })),
      ),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    expect(ok).toHaveLength(10);
    expect(refused.every((r) => r.reason instanceof DomainError && r.reason.type === 'insufficient_credits')).toBe(true);
    expect(await gw.balance(acct)).toBe(0);
    await expectLedgerInvariants(db);
  });

  test('100 parallel refunds of one job refund it exactly once', async () => {
    const acct = await gw.newAccount(50);
    const { db } = gw.database;
    await db.transaction((tx) => ledger.charge(tx, { accountId: acct.id, key: key('svc_live_k2'), amountMicro: creditsToMicro(25), reference: 'vid_once' }));
    expect(await gw.balance(acct)).toBe(25);
    const results = await Promise.all(
      Array.from({ length: 100 }, () => db.transaction((tx) => ledger.refundOnce(tx, { accountId: acct.id, reference: 'vid_once', reason: 'failed' }))),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await gw.balance(acct)).toBe(50);
    await expectLedgerInvariants(db);
  });

  test('holds never overdraw and settle to the actual amount once', async () => {
    const acct = await gw.newAccount(1);
    const { db } = gw.database;
    const k = key('svc_live_k3');
    const held = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        db.transaction((tx) => ledger.placeHold(tx, { accountId: acct.id, key: k, amountMicro: creditsToMicro(0.25), reference: `hold_${i}` })),
      ),
    );
    const placed = held.map((r, i) => (r.status === 'fulfilled' ? `hold_${i}` : null)).filter((x): x is string => x !== null);
    expect(placed).toHaveLength(4);
    expect(await gw.balance(acct)).toBe(0);
    const settles = await Promise.all(
      placed.flatMap((holdId) =>
        [0, 1].map(() => db.transaction((tx) => ledger.settleHold(tx, { accountId: acct.id, key: k, holdId, actualMicro: creditsToMicro(0.1) }))),
      ),
    );
    expect(settles.filter(Boolean)).toHaveLength(4);
    expect(await gw.balance(acct)).toBeCloseTo(0.6, 6);
    await expectLedgerInvariants(db);
  });

  test('the daily spend cap refuses what would pass it, with Retry-After to UTC midnight', async () => {
    const acct = await gw.newAccount(100);
    const { db } = gw.database;
    const k = key('svc_live_k4', 10);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        db.transaction((tx) => ledger.charge(tx, { accountId: acct.id, key: k, amountMicro: creditsToMicro(3), reference: `c_${i}` })),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason.type).toBe('daily_cap_exceeded');
    expect(refused.reason.retryAfterSeconds).toBeGreaterThan(0);
    expect(refused.reason.retryAfterSeconds).toBeLessThanOrEqual(86_400);
    expect(await gw.balance(acct)).toBe(91);
    await expectLedgerInvariants(db);
  });
});
