/**
 * The idempotency service over an in-memory claims repository, the database's clock in the
 * test's hands: what a client retrying with an `Idempotency-Key` would check. A retry of an
 * answered request gets the same answer and runs nothing; a retry while it runs is told to wait;
 * the key sent with another request is refused; a claim released (a 5xx, a 402, a 429) is
 * resumed by the same request as the same call; a claim whose instance stopped heartbeating is
 * taken over, as the same call, by the same request only; a key past its 24 hours is new. The
 * SQL side is test/integration/idempotency-takeover.test.ts and e2e idempotency*.test.ts.
 */
import { DomainError } from '../../../src/domain/errors/domain-error';
import { IdempotencyService, KEEP_SECONDS, type IdempotencyStart, type IdempotentCall } from '../../../src/domain/idempotency/idempotency-service';
import { FakeIdempotencyRepository } from '../../support/fakes/fake-idempotency-repository';

const GRACE_SECONDS = 30;
const services: IdempotencyService[] = [];
afterEach(() => services.splice(0).forEach((s) => s.stop()));

function instance(claims: FakeIdempotencyRepository, instanceId: string): IdempotencyService {
  const service = new IdempotencyService(claims, { instanceId, graceSeconds: GRACE_SECONDS });
  services.push(service);
  return service;
}

const BODY = IdempotencyService.fingerprint('POST', '/v1/images/generations', { prompt: 'a lighthouse' });
const OTHER_BODY = IdempotencyService.fingerprint('POST', '/v1/images/generations', { prompt: 'a harbour' });
const answer = (status: number, text: string) => ({
  status,
  headers: { 'content-type': 'application/json', 'x-svc-credits': '0.04' },
  body: Buffer.from(text),
});

function callOf(start: IdempotencyStart): IdempotentCall {
  if (start.kind !== 'run') throw new Error(`expected a run, got a ${start.kind}`);
  return start.call;
}

test('a retry of an answered request gets the same status, headers and body, and nothing runs again', async () => {
  const service = instance(new FakeIdempotencyRepository(), 'inst_a');
  const first = callOf(await service.start('key_1', 'k', BODY));
  expect(first.resumed).toBe(false);
  await service.complete('key_1', 'k', answer(200, '{"id":"img_1"}'));
  const retry = await service.start('key_1', 'k', BODY);
  expect(retry).toEqual({ kind: 'replay', response: answer(200, '{"id":"img_1"}') });
});

test('a retry while the first request runs is told to wait a second; the key sent with another request is refused', async () => {
  const service = instance(new FakeIdempotencyRepository(), 'inst_a');
  await service.start('key_1', 'k', BODY);
  await expect(service.start('key_1', 'k', BODY)).rejects.toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_in_use', retryAfterSeconds: 1 });
  await expect(service.start('key_1', 'k', OTHER_BODY)).rejects.toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
  // Scoped to the API key: another key's same Idempotency-Key is its own.
  expect(callOf(await service.start('key_2', 'k', OTHER_BODY)).resumed).toBe(false);
});

test.each([500, 402, 429])('a first request answered %i releases its claim: the retry runs as the same call, resumed', async (status) => {
  const service = instance(new FakeIdempotencyRepository(), 'inst_a');
  const first = callOf(await service.start('key_1', 'k', BODY));
  await service.complete('key_1', 'k', answer(status, '{"error":{}}'));
  const retry = callOf(await service.start('key_1', 'k', BODY));
  expect(retry).toEqual({ id: first.id, resumed: true });
  await expect(service.start('key_1', 'k', OTHER_BODY)).rejects.toMatchObject({ code: 'idempotency_key_reused' });
});

test("a claim whose instance stopped heartbeating past the grace is taken over by the same request as the same call; the dead run's late answer is not stored", async () => {
  const claims = new FakeIdempotencyRepository();
  const dead = instance(claims, 'inst_dead');
  const survivor = instance(claims, 'inst_alive');
  const first = callOf(await dead.start('key_1', 'k', BODY));
  dead.stop();
  claims.clock.now += (GRACE_SECONDS - 1) * 1000;
  await expect(survivor.start('key_1', 'k', BODY)).rejects.toMatchObject({ code: 'idempotency_key_in_use' });
  claims.clock.now += 2_000;
  await expect(survivor.start('key_1', 'k', OTHER_BODY)).rejects.toMatchObject({ code: 'idempotency_key_reused' });
  expect(callOf(await survivor.start('key_1', 'k', BODY))).toEqual({ id: first.id, resumed: true });
  await dead.complete('key_1', 'k', answer(200, '{"from":"dead"}'));
  await survivor.complete('key_1', 'k', answer(200, '{"from":"survivor"}'));
  expect(await survivor.start('key_1', 'k', BODY)).toEqual({ kind: 'replay', response: answer(200, '{"from":"survivor"}') });
});

test('a key past its 24 hours is new: the same request runs as a new call', async () => {
  const claims = new FakeIdempotencyRepository();
  const service = instance(claims, 'inst_a');
  const first = callOf(await service.start('key_1', 'k', BODY));
  await service.complete('key_1', 'k', answer(200, '{"id":"img_1"}'));
  claims.clock.now += KEEP_SECONDS * 1000 + 1;
  const again = callOf(await service.start('key_1', 'k', BODY));
  expect(again.resumed).toBe(false);
  expect(again.id).not.toBe(first.id);
});

test('once: a result is replayed without running the work again, a 4xx refusal is thrown again, and a failure lets the retry run', async () => {
  const service = instance(new FakeIdempotencyRepository(), 'inst_a');
  const codec = { encode: (n: number) => ({ n }), decode: async (stored: unknown) => (stored as { n: number }).n };
  let runs = 0;
  const work = async () => ++runs;
  expect(await service.once('key_1', 'ok', BODY, work, codec)).toBe(1);
  expect(await service.once('key_1', 'ok', BODY, work, codec)).toBe(1);
  expect(runs).toBe(1);

  const refused = async (): Promise<number> => {
    runs++;
    throw new DomainError('model_forbidden', 'This API key may not use the model.', { fieldPath: ['model'] });
  };
  await expect(service.once('key_1', 'no', BODY, refused, codec)).rejects.toMatchObject({ type: 'model_forbidden', param: 'model' });
  await expect(service.once('key_1', 'no', BODY, refused, codec)).rejects.toMatchObject({ type: 'model_forbidden', param: 'model' });
  expect(runs).toBe(2);

  let calls: IdempotentCall[] = [];
  const flaky = async (call: IdempotentCall): Promise<number> => {
    calls = [...calls, call];
    if (calls.length === 1) throw new Error('upstream went away');
    return 7;
  };
  await expect(service.once('key_1', 'flaky', BODY, flaky, codec)).rejects.toThrow('upstream went away');
  expect(await service.once('key_1', 'flaky', BODY, flaky, codec)).toBe(7);
  expect(calls[1]).toEqual({ id: calls[0].id, resumed: true });
});
