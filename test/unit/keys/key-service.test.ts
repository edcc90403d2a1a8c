/**
 * The key service over an in-memory key repository: what an account owner and a caller with a
 * key would check. A key authenticates with its secret and nothing else; a revoked key is
 * refused, cached or not; an account holds at most MAX_ACTIVE_KEYS active keys, however many are
 * created at once; another account's key is not found; an edit of the cap reaches the key's
 * next request; a webhook secret is shown when made and the webhook can be cleared. The SQL side
 * is test/integration/key-directory.test.ts and key-cache-refresh.test.ts, and e2e key-revocation.
 */
import { KeyCache } from '../../../src/domain/keys/key-cache';
import { KeyDirectory } from '../../../src/domain/keys/key-directory';
import { KeyService, MAX_ACTIVE_KEYS } from '../../../src/domain/keys/key-service';
import type { UrlGuard } from '../../../src/domain/ports/url-guard';
import { creditsToMicro } from '../../../src/domain/shared/money';
import { LocalTopicFeed } from '../../../src/infra/events/local-topic-feed';
import { FakeKeyRepository } from '../../support/fakes/fake-key-repository';
import { pollUntil } from '../../support/poll';

const urls: UrlGuard = { checkMediaUrl: async (u) => String(u), checkWebhookUrl: async (u) => String(u) };
const directories: KeyDirectory[] = [];
afterEach(() => directories.splice(0).forEach((d) => d.stop()));

/** A key service with the cache and directory an instance runs with, on one repository. */
async function service(repository = new FakeKeyRepository()) {
  const feed = new LocalTopicFeed();
  const directory = new KeyDirectory(repository, feed);
  directories.push(directory);
  await directory.load();
  const keys = new KeyService(repository, () => true, urls, new KeyCache(feed), directory);
  return { keys, repository, directory };
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (e: { type?: string }) => e.type,
  );

test('a key authenticates with its secret, as its account and mode, with its cap; a wrong secret or a malformed one is refused', async () => {
  const { keys } = await service();
  const { key, secret } = await keys.create('acct_a', { name: 'ci', dailySpendCap: 5 });
  expect(await keys.authenticate(secret)).toEqual({
    kind: 'key',
    keyId: key.id,
    accountId: 'acct_a',
    mode: 'live',
    allowedModels: null,
    blockedModels: null,
    budgets: { day: creditsToMicro(5), week: null, month: null },
  });
  const wrong = `${secret.slice(0, -1)}${secret.endsWith('a') ? 'b' : 'a'}`;
  expect(await refusal(keys.authenticate(wrong))).toBe('authentication_error');
  expect(await refusal(keys.authenticate('not-a-key'))).toBe('authentication_error');
});

test('a revoked key is refused, whether its record was cached or not', async () => {
  const { keys } = await service();
  const cached = await keys.create('acct_a', {});
  const uncached = await keys.create('acct_a', {});
  await keys.authenticate(cached.secret);
  await keys.revoke('acct_a', cached.key.id);
  await keys.revoke('acct_a', uncached.key.id);
  expect(await refusal(keys.authenticate(cached.secret))).toBe('authentication_error');
  expect(await refusal(keys.authenticate(uncached.secret))).toBe('authentication_error');
  expect(await keys.list('acct_a')).toEqual([]);
  await expect(keys.revoke('acct_a', cached.key.id)).rejects.toMatchObject({ status: 404, code: 'key_not_found' });
});

test(`an account holds at most ${MAX_ACTIVE_KEYS} active keys, however many are created at once; a revocation makes room`, async () => {
  const { keys } = await service();
  const outcomes = await Promise.all(Array.from({ length: MAX_ACTIVE_KEYS + 3 }, () => refusal(keys.create('acct_a', {}))));
  expect(outcomes.filter((o) => o === 'accepted')).toHaveLength(MAX_ACTIVE_KEYS);
  expect(outcomes.filter((o) => o === 'key_limit_reached')).toHaveLength(3);
  const [newest] = await keys.list('acct_a');
  await keys.revoke('acct_a', newest.id);
  expect(await refusal(keys.create('acct_a', {}))).toBe('accepted');
  expect(await refusal(keys.create('acct_b', {}))).toBe('accepted');
});

test("another account's key is not found: it cannot be read, edited, revoked or given a webhook", async () => {
  const { keys } = await service();
  const { key, secret } = await keys.create('acct_a', { name: 'mine' });
  const notFound = { status: 404, code: 'key_not_found' };
  await expect(keys.get('acct_b', key.id)).rejects.toMatchObject(notFound);
  await expect(keys.update('acct_b', key.id, { name: 'theirs' })).rejects.toMatchObject(notFound);
  await expect(keys.revoke('acct_b', key.id)).rejects.toMatchObject(notFound);
  await expect(keys.configureWebhook('acct_b', key.id, { url: 'https://hooks.example/x' })).rejects.toMatchObject(notFound);
  expect((await keys.get('acct_a', key.id)).name).toBe('mine');
  expect((await keys.authenticate(secret)).keyId).toBe(key.id);
});

test("an edit of a key's cap and models is what its next request authenticates with", async () => {
  const { keys } = await service();
  const { key, secret } = await keys.create('acct_a', { dailySpendCap: 5 });
  await keys.authenticate(secret);
  const edited = await keys.update('acct_a', key.id, { dailySpendCap: null, allowedModels: ['svc-chat-1'] });
  expect(edited).toMatchObject({ dailySpendCapMicro: null, allowedModels: ['svc-chat-1'], blockedModels: null });
  expect(await keys.authenticate(secret)).toMatchObject({ budgets: { day: null, week: null, month: null }, allowedModels: ['svc-chat-1'] });
  // A field not sent is left as it is.
  expect(await keys.update('acct_a', key.id, { name: 'renamed' })).toMatchObject({ name: 'renamed', allowedModels: ['svc-chat-1'] });
});

test('a webhook secret is answered when it is made and when it is rotated; a cleared webhook has none, and cannot be rotated', async () => {
  const { keys, repository } = await service();
  const { key } = await keys.create('acct_a', {});
  const set = await keys.configureWebhook('acct_a', key.id, { url: 'https://hooks.example/x' });
  expect(set).toEqual({ url: 'https://hooks.example/x', secret: expect.stringMatching(/^whsec_/) });
  const rotated = await keys.configureWebhook('acct_a', key.id, { regenerateSecret: true });
  expect(rotated.url).toBe('https://hooks.example/x');
  expect(rotated.secret).not.toBe(set.secret);
  expect(repository.webhookSecretOf(key.id)).toBe(rotated.secret);
  expect(await keys.configureWebhook('acct_a', key.id, { url: null })).toEqual({ url: null });
  expect((await keys.get('acct_a', key.id)).webhookUrl).toBeNull();
  await expect(keys.configureWebhook('acct_a', key.id, { regenerateSecret: true })).rejects.toMatchObject({
    type: 'invalid_request_error',
    param: 'regenerateSecret',
  });
});

test('a wrong secret is refused without a read of the keys, whether its key id exists or not; the right one is read once, then cached', async () => {
  const { keys, repository, directory } = await service();
  const { key, secret } = await keys.create('acct_a', {});
  const other = await keys.create('acct_a', {});
  // The creations' announcements read back: until then the directory asks the database about those ids.
  await pollUntil(
    async () => directory.unsettled,
    (n) => n === 0,
    5_000,
    10,
  );
  const unknownId = secret.replace(key.id.slice(-16), 'Z'.repeat(16));
  expect(await refusal(keys.authenticate(`${other.secret.slice(0, -1)}${other.secret.endsWith('a') ? 'b' : 'a'}`))).toBe('authentication_error');
  expect(await refusal(keys.authenticate(unknownId))).toBe('authentication_error');
  expect(repository.keyReads).toBe(0);
  await keys.authenticate(secret);
  await keys.authenticate(secret);
  expect(repository.keyReads).toBe(1);
});
