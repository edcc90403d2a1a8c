/**
 * An instance dies while the first request of an Idempotency-Key runs on it. Two gateway
 * processes share PostgreSQL; A takes a chat call with a key and waits on its upstream. While A
 * lives, B answers the retry 409 `idempotency_key_in_use`, also well past the grace (A's
 * heartbeats keep its claim). Once A is SIGKILLed, its claim goes stale after the grace and B's
 * retry runs the call: after the grace, not after the 15 minutes a claim without a holder waits.
 * A second retry replays B's answer; the money is whole. The grace passes on the database's
 * clock, for the claim, by ageing its last heartbeat. Runs in CI's PostgreSQL + Redis pass.
 */
import { pollUntil } from '../support/poll';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { startTwoGateways, type TwoGateways } from '../support/two-gateways';
import type { ChildGateway } from '../support/child-gateway';
import { openDatabase } from '../../src/infra/db/orm';
import { creditsToMicro } from '../../src/domain/shared/money';

const shared = process.env.DATABASE_URL && process.env.REDIS_URL ? describe : describe.skip;
vi.setConfig({ testTimeout: 120_000 });

const GRACE_SECONDS = 2;

shared('an instance killed while it runs an idempotent request', () => {
  let two: TwoGateways;
  beforeAll(async () => {
    two = await startTwoGateways('idemcrash', { LEASE_GRACE_SECONDS: String(GRACE_SECONDS) });
  });
  afterAll(async () => {
    await two?.close();
  });

  test('409 while the holder lives, past the grace too; run by the other instance soon after the holder dies; replayed after', async () => {
    const { a, b, upstream, databaseUrl, dataDir } = two;
    const liveKey = await two.liveKey();
    const body = JSON.stringify({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'once only' }], max_tokens: 16 });
    const post = (target: ChildGateway) =>
      fetch(`${target.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json', 'idempotency-key': 'held-by-a' },
        body,
      });

    upstream.setMode('held-json');
    const onA = post(a).then(
      (res) => res.status,
      () => 'cut' as const,
    );
    await pollUntil(
      async () => upstream.requests.filter((r) => r.path.endsWith('/chat/completions')).length,
      (n) => n >= 1,
      10_000,
      20,
    );

    const busy = await post(b);
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as { error: { code: string } }).error.code).toBe('idempotency_key_in_use');

    const watch = await openDatabase({ databaseUrl, dataDir });
    // Twice the grace passes on the database's clock for the claim (its last heartbeat that much older)...
    const claimAged = () =>
      watch.db.run(`update idempotency_keys set heartbeat_at = heartbeat_at - make_interval(secs => ?) where idempotency_key = 'held-by-a'`, [
        2 * GRACE_SECONDS,
      ]);
    const heartbeatFresh = async () =>
      (await watch.db.one<{ fresh: boolean }>(
        `select heartbeat_at > now() - make_interval(secs => ?) as fresh from idempotency_keys where idempotency_key = 'held-by-a'`,
        [GRACE_SECONDS],
      ))!.fresh;
    let ran: Response;
    try {
      await claimAged();
      // ...and A, alive, says so: its next heartbeat makes the claim fresh again, and B is still told to wait.
      await pollUntil(heartbeatFresh, (fresh) => fresh, 10_000, 50);
      const stillBusy = await post(b);
      expect(stillBusy.status).toBe(409);
      await stillBusy.body?.cancel();

      await a.kill();
      expect(await onA).toBe('cut');
      upstream.setMode('ok');
      upstream.releaseHeld();
      // The grace passes with nobody heartbeating the claim: B's retry runs the call at once (its
      // claim started moments ago, far from the 15 minutes a claim without a holder waits).
      await claimAged();
      expect(await heartbeatFresh()).toBe(false);
      ran = await post(b);
    } finally {
      await watch.close();
    }
    expect(ran.status).toBe(200);
    const answer = (await ran.json()) as { id: string; choices: unknown[] };
    expect(answer.choices).toHaveLength(1);

    const replay = await post(b);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(((await replay.json()) as { id: string }).id).toBe(answer.id);

    const check = await openDatabase({ databaseUrl, dataDir });
    try {
      // The call B answered is charged once.
      const charges = await check.db.all<{ n: string }>(`select count(*) as n from lease_charges where request_id = ?`, [answer.id]);
      expect(Number(charges[0].n)).toBe(1);
      await expectLedgerInvariants(check.db);
    } finally {
      await check.close();
    }
  });
});

shared('an instance killed after it charged an idempotent call, before its response was stored', () => {
  let two: TwoGateways;
  beforeAll(async () => {
    two = await startTwoGateways('idemcharged', { LEASE_GRACE_SECONDS: String(GRACE_SECONDS) });
  });
  afterAll(async () => {
    await two?.close();
  });

  test("B's retry answers the same call and charge; the account is charged once", async () => {
    const { a, b, databaseUrl, dataDir } = two;
    const liveKey = await two.liveKey();
    const body = JSON.stringify({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'charged once' }], max_tokens: 16 });
    const post = (target: ChildGateway) =>
      fetch(`${target.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json', 'idempotency-key': 'charged-on-a' },
        body,
      });
    const db = await openDatabase({ databaseUrl, dataDir });
    try {
      // The database refuses to store any idempotent response while this table has a row.
      await db.db.run(`create table refuse_responses (x int)`);
      await db.db.run(`insert into refuse_responses values (1)`);
      await db.db.run(`create function refuse_response() returns trigger language plpgsql as $$
          begin
            if new.status_code is not null and exists (select 1 from refuse_responses) then raise exception 'refused for the test'; end if;
            return new;
          end $$`);
      await db.db.run(`create trigger refuse_response before update on idempotency_keys for each row execute function refuse_response()`);
      const balanceOf = async () => Number((await db.db.one<{ b: string }>(`select sum(balance_micro) as b from accounts`))!.b);
      const before = await balanceOf();

      // A answers (the response it could not store is kept in memory, tried again every 2 s) and charges.
      const onA = await post(a);
      expect(onA.status).toBe(200);
      const answerA = (await onA.json()) as { id: string };
      const creditsA = onA.headers.get('x-svc-credits');
      expect(Number(creditsA)).toBeGreaterThan(0);
      await a.kill();
      await db.db.run(`delete from refuse_responses`);

      const ran = await pollUntil(
        () => post(b),
        (res) => res.status !== 409,
        20_000,
        250,
      );
      expect(ran.status).toBe(200);
      expect(ran.headers.get('idempotent-replayed')).toBeNull();
      expect(((await ran.json()) as { id: string }).id).toBe(answerA.id);
      expect(ran.headers.get('x-svc-credits')).toBe(creditsA);

      // Leases debit the balance when taken: what moved, less what open leases still hold, is what was charged.
      const charges = await db.db.all<{ request_id: string }>(`select request_id from lease_charges`);
      expect(charges.map((c) => c.request_id)).toEqual([answerA.id]);
      const direct = await db.db.all(`select reference from ledger_entries where kind = 'charge'`);
      expect(direct).toEqual([]);
      const open = await db.db.all<{ amount_micro: string; spent_micro: string }>(
        `select l.amount_micro, (select coalesce(sum(c.amount_micro), 0) from lease_charges c where c.lease_id = l.id) as spent_micro
           from credit_leases l where l.closed_at is null`,
      );
      const unspentOpen = open.reduce((sum, l) => sum + Number(l.amount_micro) - Number(l.spent_micro), 0);
      expect(before - (await balanceOf()) - unspentOpen).toBe(creditsToMicro(Number(creditsA)));
      await expectLedgerInvariants(db.db);
    } finally {
      await db.close();
    }
  });
});
