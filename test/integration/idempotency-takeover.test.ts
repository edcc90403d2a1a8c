/**
 * An Idempotency-Key claim taken over from an instance that died keeps naming the same call, on
 * a real database (PGlite, or PostgreSQL in CI's second pass). Two IdempotencyServices and two
 * lease books stand for two instances: A claims a key and commits the call's charge, then dies
 * before it stores the response; B's retry runs the call again under the same id and is not
 * charged a second time, and says what the call was charged. The same with real processes and
 * a SIGKILL: test/e2e/idempotency-holder-crash.test.ts. Both keep time on a fake clock, and the
 * grace passes on the database's clock by ageing the claim's last heartbeat.
 */
import { NO_BUDGETS } from '../../src/domain/credits/budgets';
import { startTestServices, type TestServices } from '../support/test-services';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { Billing } from '../../src/domain/credits/billing';
import { ChargeBatcher } from '../../src/domain/credits/charge-batcher';
import { LeaseBook } from '../../src/domain/credits/lease-book';
import { SqlLeaseStore } from '../../src/infra/db/repositories/sql-lease-store';
import { DomainError } from '../../src/domain/errors/domain-error';
import { IdempotencyService, type IdempotencyStart } from '../../src/domain/idempotency/idempotency-service';
import { SqlIdempotencyRepository } from '../../src/infra/db/repositories/sql-idempotency-repository';
import type { KeyPrincipal } from '../../src/domain/keys/principal';
import { creditsToMicro } from '../../src/domain/shared/money';
import { LocalTopicFeed } from '../../src/infra/events/local-topic-feed';
import { fakeClock } from '../support/fake-clock';

const GRACE_SECONDS = 1;
let gw: TestServices;
const stops: Array<() => unknown> = [];
beforeAll(async () => {
  gw = await startTestServices();
});
afterAll(async () => {
  for (const stop of stops) await stop();
  await gw.close();
});

const db = () => gw.database.db;
const recalls = new LocalTopicFeed();
const clock = fakeClock();

function instance(name: string) {
  const instanceId = `inst_${name}_${Math.random().toString(36).slice(2)}`;
  const store = new SqlLeaseStore(db());
  const book = new LeaseBook(store, new ChargeBatcher(store, 0, 1, 0, clock), recalls, {
    instanceId,
    idleMs: 60_000,
    heartbeatMs: 200,
    graceSeconds: GRACE_SECONDS,
    wantFactor: 32,
    minWantMicro: creditsToMicro(1),
    clock,
  });
  const idempotency = new IdempotencyService(new SqlIdempotencyRepository(db()), { instanceId, graceSeconds: GRACE_SECONDS, clock });
  return { book, billing: new Billing(book), idempotency };
}

async function liveKey(accountId: string, id: string): Promise<KeyPrincipal> {
  return { kind: 'key', keyId: id, accountId, mode: 'live', allowedModels: null, blockedModels: null, budgets: NO_BUDGETS };
}

const run = (start: IdempotencyStart): string => {
  if (start.kind !== 'run') throw new Error(`expected to run, got ${start.kind}`);
  return start.call.id;
};
/** The grace passes on the database's clock with no heartbeat of the claim on the way (its holder is dead). */
const afterTheGrace = (keyId: string, key: string) =>
  db().run(`update idempotency_keys set heartbeat_at = heartbeat_at - make_interval(secs => ?) where api_key_id = ? and idempotency_key = ?`, [
    GRACE_SECONDS + 1,
    keyId,
    key,
  ]);

test("a retry that takes over a dead instance's claim runs the same call: its committed charge is not made twice", async () => {
  const acct = await gw.newAccount(100);
  const { id: keyId } = await gw.newKey(acct);
  const key = await liveKey(acct.id, keyId);
  const a = instance('a');
  const b = instance('b');
  stops.push(
    () => b.book.stop(),
    () => b.idempotency.stop(),
  );

  const callId = run(await a.idempotency.start(keyId, 'charged-then-died', 'fp-1'));
  const holdA = await a.billing.hold(key, creditsToMicro(2), 'svc-chat-1', `chatcmpl-${callId}`);
  expect(await a.billing.settle(holdA, creditsToMicro(1.25))).toBe(creditsToMicro(1.25));
  // A dies here, before `complete`: no response stored, no more heartbeats.
  a.idempotency.stop();
  expect(await gw.balance(acct)).toBe(98.75);

  // While A's claim is fresh, B is told to wait; after the grace, B runs it, as the same call.
  await expect(b.idempotency.start(keyId, 'charged-then-died', 'fp-1')).rejects.toMatchObject({ code: 'idempotency_key_in_use' });
  await afterTheGrace(keyId, 'charged-then-died');
  expect(run(await b.idempotency.start(keyId, 'charged-then-died', 'fp-1'))).toBe(callId);
  const holdB = await b.billing.hold(key, creditsToMicro(2), 'svc-chat-1', `chatcmpl-${callId}`);
  // Its own usage differs a little; what it answers is what the balance moved for the call.
  expect(await b.billing.settle(holdB, creditsToMicro(1.5))).toBe(creditsToMicro(1.25));
  await b.idempotency.complete(keyId, 'charged-then-died', { status: 200, headers: {}, body: Buffer.from('{}') });

  expect(await gw.balance(acct)).toBe(98.75);
  const charges = await db().all(`select request_id from lease_charges where account_id = ?`, [acct.id]);
  expect(charges).toEqual([{ request_id: `chatcmpl-${callId}` }]);
  const direct = await db().all(`select reference from ledger_entries where account_id = ? and kind = 'charge'`, [acct.id]);
  expect(direct).toEqual([]);
  // A's lease, left open by its death, is closed by B after the grace: everything adds up.
  await a.book.stop();
  await expectLedgerInvariants(db());
});

test('a dead claim is taken over only by the same request; a key past its 24 hours starts a new call', async () => {
  const acct = await gw.newAccount(10);
  const { id: keyId } = await gw.newKey(acct);
  const a = instance('a2');
  const b = instance('b2');
  stops.push(() => b.idempotency.stop());

  const first = run(await a.idempotency.start(keyId, 'k', 'fp-original'));
  a.idempotency.stop();
  await afterTheGrace(keyId, 'k');
  const other = await b.idempotency.start(keyId, 'k', 'fp-other').catch((e: unknown) => e);
  expect(other).toBeInstanceOf(DomainError);
  expect(other).toMatchObject({ code: 'idempotency_key_reused', param: 'Idempotency-Key' });
  expect(run(await b.idempotency.start(keyId, 'k', 'fp-original'))).toBe(first);
  await b.idempotency.complete(keyId, 'k', { status: 200, headers: {}, body: Buffer.from('{"n":1}') });

  // Answered: replayed, whatever instance asks.
  expect(await a.idempotency.start(keyId, 'k', 'fp-original')).toMatchObject({ kind: 'replay' });
  // Expired: the key is free for any request, and names a call of its own.
  await db().run(`update idempotency_keys set expires_at = now() - interval '1 second' where api_key_id = ? and idempotency_key = 'k'`, [keyId]);
  const again = run(await b.idempotency.start(keyId, 'k', 'fp-other'));
  expect(again).not.toBe(first);
  expect(again).toMatch(/^[A-Za-z0-9]{20}$/);
});
