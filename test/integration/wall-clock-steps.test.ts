/**
 * The wall clock steps (NTP corrects it, a paused VM resumes) and durations inside the process
 * must not step with it: a rate-limit window stays a minute long, an instance still running an
 * idempotent call keeps its claim, and an idle lease still goes back. Each runs on a fake clock whose
 * wall time is moved here as such a step moves it; the database's clock, which claims are timed by,
 * stays where it is.
 */
import { NO_BUDGETS } from '../../src/domain/credits/budgets';
import { startTestServices, type TestServices } from '../support/test-services';
import { fakeClock } from '../support/fake-clock';
import { pollUntil } from '../support/poll';
import { Billing } from '../../src/domain/credits/billing';
import { ChargeBatcher } from '../../src/domain/credits/charge-batcher';
import { LeaseBook } from '../../src/domain/credits/lease-book';
import { SqlLeaseStore } from '../../src/infra/db/repositories/sql-lease-store';
import { SqlIdempotencyRepository } from '../../src/infra/db/repositories/sql-idempotency-repository';
import { IdempotencyService } from '../../src/domain/idempotency/idempotency-service';
import { creditsToMicro } from '../../src/domain/shared/money';
import { LocalTopicFeed } from '../../src/infra/events/local-topic-feed';
import { LocalFirstRateLimiter } from '../../src/infra/ratelimit/local-first-rate-limiter';
import type { RateGroup } from '../../src/domain/ratelimit/rate-limiter';

const LIMITS: Record<RateGroup, number> = { chat: 60, image: 3, video: 5 };
const STEP_MS = 1_000_000;

describe.each([
  ['back', -STEP_MS],
  ['ahead', STEP_MS],
])('the wall clock steps %s 1,000 s', (_direction, stepMs) => {
  test('a key at its rate limit stays limited, told to retry within the minute', async () => {
    const clock = fakeClock();
    const limiter = new LocalFirstRateLimiter(undefined, LIMITS, undefined, clock);
    const key = `key_clock_${stepMs}`;
    for (let i = 0; i < LIMITS.image; i++) expect((await limiter.consume(key, 'image')).allowed).toBe(true);
    clock.stepWall(stepMs);
    const after = await limiter.consume(key, 'image');
    expect(after).toMatchObject({ allowed: false, remaining: 0 });
    expect(after.resetSeconds).toBeLessThanOrEqual(60);
  });
});

describe('work in progress while the wall clock steps', () => {
  const GRACE_SECONDS = 1;
  let gw: TestServices;
  const services: IdempotencyService[] = [];
  beforeAll(async () => {
    gw = await startTestServices();
  });
  const books: LeaseBook[] = [];
  afterAll(async () => {
    services.forEach((s) => s.stop());
    for (const book of books) await book.stop();
    await gw.close();
  });
  const clock = fakeClock();
  const instance = (name: string) => {
    const service = new IdempotencyService(new SqlIdempotencyRepository(gw.database.db), {
      instanceId: `inst_${name}_${Math.random().toString(36).slice(2)}`,
      graceSeconds: GRACE_SECONDS,
      clock,
    });
    services.push(service);
    return service;
  };

  test('an idempotent call running as the clock jumps ahead keeps its claim: another instance retrying the key is told to wait, past the grace', async () => {
    const acct = await gw.newAccount(10);
    const { id: keyId } = await gw.newKey(acct);
    const [a, b] = [instance('a'), instance('b')];
    expect((await a.start(keyId, 'clock-jump', 'fp')).kind).toBe('run');
    // The jump is past ABANDONED_AFTER_SECONDS (15 minutes): A's call still runs, and A must say so.
    clock.stepWall(STEP_MS);
    // The grace passes on the database's clock (the claim's last heartbeat ages past it), and on
    // A's, whose heartbeats (every sixth of the grace) come due meanwhile.
    const db = gw.database.db;
    const claim = [keyId, 'clock-jump'];
    await db.run(`update idempotency_keys set heartbeat_at = heartbeat_at - make_interval(secs => ?) where api_key_id = ? and idempotency_key = ?`, [
      GRACE_SECONDS + 1,
      ...claim,
    ]);
    await clock.tickAsync(GRACE_SECONDS * 1000 + 800);
    const fresh = () =>
      db
        .one<{ fresh: boolean }>(
          `select heartbeat_at > now() - make_interval(secs => ?) as fresh from idempotency_keys where api_key_id = ? and idempotency_key = ?`,
          [GRACE_SECONDS, ...claim],
        )
        .then((r) => r!.fresh);
    await pollUntil(fresh, (f) => f, 5_000, 10);
    await expect(b.start(keyId, 'clock-jump', 'fp')).rejects.toMatchObject({ code: 'idempotency_key_in_use' });
  });

  test('a lease last used before the clock stepped back goes back once idle, not 1,000 s later', async () => {
    const acct = await gw.newAccount(40);
    const { id: keyId } = await gw.newKey(acct);
    const store = new SqlLeaseStore(gw.database.db);
    const book = new LeaseBook(store, new ChargeBatcher(store, 0, 1, 0, clock), new LocalTopicFeed(), {
      instanceId: `inst_idle_${Math.random().toString(36).slice(2)}`,
      idleMs: 100,
      heartbeatMs: 60_000,
      graceSeconds: 600,
      wantFactor: 32,
      minWantMicro: creditsToMicro(1),
      clock,
    });
    books.push(book);
    book.start();
    const billing = new Billing(book);
    const key = { kind: 'key', keyId, accountId: acct.id, mode: 'live', allowedModels: null, blockedModels: null, budgets: NO_BUDGETS } as const;
    const hold = await billing.hold(key, creditsToMicro(1), 'svc-chat-1', 'chatcmpl-clock-step');
    expect(await billing.settle(hold, creditsToMicro(0.5))).toBe(creditsToMicro(0.5));
    const openLeases = async () =>
      Number((await gw.database.db.one<{ n: string }>(`select count(*) as n from credit_leases where account_id = ? and closed_at is null`, [acct.id]))!.n);
    clock.stepWall(-STEP_MS);
    // The idle pass (every idleMs here) finds it idle once idleMs have passed on the monotonic clock.
    await clock.tickAsync(200);
    await pollUntil(openLeases, (n) => n === 0, 5_000, 50);
    expect(await gw.balance(acct)).toBe(39.5);
  });
});
