/**
 * Keys that expire and rotate, over the in-memory key repository, on a fake clock the test steps:
 * an expired key's own secret is told `api_key_expired` from its moment on, decided from the
 * cached record without a read; a rotated key takes its new secret at once and the replaced one
 * until the grace ends, and after it the replaced one is refused from memory (the cache, or the
 * directory of an instance that never cached the key). Two services on one repository and one
 * key-change feed stand for two instances.
 */
import { KeyCache } from '../../../src/domain/keys/key-cache';
import { KeyDirectory } from '../../../src/domain/keys/key-directory';
import { KeyService } from '../../../src/domain/keys/key-service';
import type { UrlGuard } from '../../../src/domain/ports/url-guard';
import { LocalTopicFeed } from '../../../src/infra/events/local-topic-feed';
import { FakeKeyRepository } from '../../support/fakes/fake-key-repository';
import { fakeClock, type FakeClock } from '../../support/fake-clock';
import { pollUntil } from '../../support/poll';

const urls: UrlGuard = { checkMediaUrl: async (u) => String(u), checkWebhookUrl: async (u) => String(u) };
const directories: KeyDirectory[] = [];
afterEach(() => directories.splice(0).forEach((d) => d.stop()));

/** How long the directory waits to read announced keys together (key-directory.ts). */
const READ_BATCH_MS = 100;

/** `instances` key services sharing one repository, one feed and one clock, each with its cache and directory. */
async function instances(count = 1) {
  const clock = fakeClock();
  const repository = new FakeKeyRepository();
  const feed = new LocalTopicFeed();
  const made = await Promise.all(
    Array.from({ length: count }, async () => {
      const directory = new KeyDirectory(repository, feed, clock);
      directories.push(directory);
      await directory.load();
      return { keys: new KeyService(repository, () => true, urls, new KeyCache(feed, clock), directory, clock), directory };
    }),
  );
  /** Until every directory has read back what was announced. */
  const settled = async () => {
    await clock.tickAsync(READ_BATCH_MS);
    await pollUntil(
      async () => made.every((m) => m.directory.unsettled === 0),
      (done) => done,
      5_000,
      10,
    );
  };
  return { clock, repository, settled, services: made.map((m) => m.keys) };
}

const verdict = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (e: { code?: string; type?: string }) => e.code ?? e.type,
  );
const inSeconds = (clock: FakeClock, s: number) => new Date(clock.now() + s * 1000).toISOString();

test('a key works until its expiresAt and answers api_key_expired from that moment, from its cached record; a wrong secret is still invalid', async () => {
  const { clock, repository, services } = await instances();
  const [keys] = services;
  const expiresAt = inSeconds(clock, 30);
  const { key, secret } = await keys.create('acct_a', { expiresAt });
  expect(key.expiresAt?.toISOString()).toBe(new Date(expiresAt).toISOString());
  expect((await keys.authenticate(secret)).usableUntil).toBe(Date.parse(expiresAt));
  const reads = repository.keyReads;
  clock.stepWall(29_999);
  expect(await verdict(keys.authenticate(secret))).toBe('accepted');
  clock.stepWall(1);
  expect(await verdict(keys.authenticate(secret))).toBe('api_key_expired');
  expect(await verdict(keys.authenticate(`${secret.slice(0, -1)}${secret.endsWith('a') ? 'b' : 'a'}`))).toBe('invalid_api_key');
  expect(repository.keyReads).toBe(reads);
});

test('an expiresAt in the past, or not RFC 3339 with a time zone, is a 400 naming it; on an edit null clears it and a later one brings the key back', async () => {
  const { clock, services } = await instances();
  const [keys] = services;
  for (const expiresAt of [inSeconds(clock, -1), new Date(clock.now()).toISOString(), 'tomorrow', '2099-01-01T00:00:00', '2099-01-01', 4102444800]) {
    await expect(keys.create('acct_a', { expiresAt })).rejects.toMatchObject({ type: 'invalid_request_error', param: 'expiresAt' });
  }
  const { key, secret } = await keys.create('acct_a', { expiresAt: '2099-01-01T09:00:00+09:00' });
  expect(key.expiresAt?.toISOString()).toBe('2099-01-01T00:00:00.000Z');
  await keys.update('acct_a', key.id, { expiresAt: inSeconds(clock, 10) });
  clock.stepWall(10_000);
  expect(await verdict(keys.authenticate(secret))).toBe('api_key_expired');
  await expect(keys.update('acct_a', key.id, { expiresAt: inSeconds(clock, -60) })).rejects.toMatchObject({ param: 'expiresAt' });
  expect((await keys.update('acct_a', key.id, { expiresAt: null })).expiresAt).toBeNull();
  expect(await verdict(keys.authenticate(secret))).toBe('accepted');
  await keys.update('acct_a', key.id, { expiresAt: inSeconds(clock, 5) });
  expect(await verdict(keys.authenticate(secret))).toBe('accepted');
  // Another field edited leaves the expiry as it is.
  expect((await keys.update('acct_a', key.id, { name: 'renamed' })).expiresAt).not.toBeNull();
});

test('a rotated key takes its new secret at once and the replaced one until the grace ends, on an instance that had it cached and on one that never read it', async () => {
  const { clock, repository, settled, services } = await instances(2);
  const [a, b] = services;
  const { key, secret: old } = await a.create('acct_a', {});
  await settled();
  await a.authenticate(old); // cached on A only
  const rotated = await a.rotate('acct_a', key.id, { graceSeconds: 60 });
  expect(rotated.secret).not.toBe(old);
  expect(rotated.secret.startsWith(`${key.id}_`)).toBe(true);
  expect(rotated.key.rotatedAt?.getTime()).toBe(clock.now());
  expect(rotated.key).not.toHaveProperty('secretHash');
  await settled();
  for (const keys of [a, b]) {
    expect(await verdict(keys.authenticate(old))).toBe('accepted');
    expect(await verdict(keys.authenticate(rotated.secret))).toBe('accepted');
  }
  // A's replaced secret is usable until the grace ends (what a WebSocket opened with it lasts).
  const graceEnds = rotated.key.rotatedAt!.getTime() + 60_000;
  expect((await a.authenticate(old)).usableUntil).toBe(graceEnds);
  expect((await a.authenticate(rotated.secret)).usableUntil).toBeUndefined();
  clock.stepWall(graceEnds - 1 - clock.now());
  expect(await verdict(b.authenticate(old))).toBe('accepted');
  clock.stepWall(1);
  const reads = repository.keyReads;
  for (const keys of [a, b]) {
    expect(await verdict(keys.authenticate(old))).toBe('invalid_api_key');
    expect(await verdict(keys.authenticate(rotated.secret))).toBe('accepted');
  }
  // A third instance's view: the directory alone refuses the replaced secret after its grace.
  const c = new KeyService(repository, () => true, urls, undefined, await directoryOn(repository, clock), clock);
  expect(await verdict(c.authenticate(old))).toBe('invalid_api_key');
  expect(repository.keyReads).toBe(reads);
});

/** A loaded directory over `repository`, on `clock`, with no feed of its own news. */
async function directoryOn(repository: FakeKeyRepository, clock: FakeClock) {
  const directory = new KeyDirectory(repository, new LocalTopicFeed(), clock);
  directories.push(directory);
  await directory.load();
  return directory;
}

test('graceSeconds 0 stops the replaced secret at once; rotating again during a grace stops the secret replaced before at once', async () => {
  const { settled, services } = await instances(2);
  const [a, b] = services;
  const { key, secret: first } = await a.create('acct_a', {});
  await b.authenticate(first);
  const { secret: second } = await a.rotate('acct_a', key.id, { graceSeconds: 0 });
  await settled();
  for (const keys of [a, b]) expect(await verdict(keys.authenticate(first))).toBe('invalid_api_key');
  const { secret: third } = await a.rotate('acct_a', key.id, {}); // the default grace, a day
  await settled();
  const { secret: fourth } = await a.rotate('acct_a', key.id, { graceSeconds: 3600 });
  await settled();
  for (const keys of [a, b]) {
    expect(await verdict(keys.authenticate(second))).toBe('invalid_api_key');
    expect(await verdict(keys.authenticate(third))).toBe('accepted');
    expect(await verdict(keys.authenticate(fourth))).toBe('accepted');
  }
});

test("a rotation's graceSeconds is a whole number from 0 to 604800, else a 400 naming it; another account's key is not found; an expired key's secrets are both expired", async () => {
  const { clock, services } = await instances();
  const [keys] = services;
  const { key, secret } = await keys.create('acct_a', { expiresAt: inSeconds(clock, 120) });
  for (const graceSeconds of [-1, 604_801, 1.5, '60', null]) {
    await expect(keys.rotate('acct_a', key.id, { graceSeconds })).rejects.toMatchObject({ type: 'invalid_request_error', param: 'graceSeconds' });
  }
  await expect(keys.rotate('acct_a', key.id, { grace: 60 })).rejects.toMatchObject({ type: 'invalid_request_error', param: 'grace' });
  await expect(keys.rotate('acct_b', key.id, {})).rejects.toMatchObject({ status: 404, code: 'key_not_found', param: 'id' });
  await expect(keys.rotate('acct_a', 'svc_live_AAAAAAAAAAAAAAAA', {})).rejects.toMatchObject({ status: 404, code: 'key_not_found' });
  expect(await verdict(keys.authenticate(secret))).toBe('accepted');
  const { secret: next } = await keys.rotate('acct_a', key.id, { graceSeconds: 604_800 });
  clock.stepWall(120_000);
  expect(await verdict(keys.authenticate(secret))).toBe('api_key_expired');
  expect(await verdict(keys.authenticate(next))).toBe('api_key_expired');
});
