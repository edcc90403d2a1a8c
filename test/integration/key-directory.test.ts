/**
 * Refusing a secret does not depend on whether its key id exists: an unknown id and a wrong
 * secret of a known key (cached or not) are refused from memory, with no read of the keys table;
 * a key created on one instance works on the other at once; a revoked key is refused everywhere;
 * a directory that may be stale (its feed down) asks the database instead of refusing. Two key
 * services on one database and one key-change feed stand for two instances.
 */
import { startTestServices, type TestServices } from '../support/test-services';
import { KeyService } from '../../src/domain/keys/key-service';
import { KeyCache } from '../../src/domain/keys/key-cache';
import { KeyDirectory } from '../../src/domain/keys/key-directory';
import { SqlKeyRepository } from '../../src/infra/db/repositories/sql-key-repository';
import { LocalTopicFeed } from '../../src/infra/events/local-topic-feed';
import { CallerUrlGuard } from '../../src/infra/http/caller-url-guard';
import type { TopicFeed } from '../../src/domain/ports/topic-feed';
import type { Database } from '../../src/domain/ports/database';
import { randomBase62 } from '../../src/domain/shared/ids';
import { pollUntil } from '../support/poll';
import { fakeClock, type FakeClock } from '../support/fake-clock';

let gw: TestServices;
beforeAll(async () => {
  gw = await startTestServices();
});
afterAll(async () => {
  await gw.close();
});

/** The database, counting the statements that read the keys table. */
function counting(db: Database) {
  const reads = { keys: 0 };
  const count = (sql: string) => {
    if (/from api_keys/i.test(sql)) reads.keys++;
  };
  const wrapped = Object.create(db) as Database;
  wrapped.all = (sql: string, params?: unknown[]) => (count(sql), db.all(sql, params));
  wrapped.one = (sql: string, params?: unknown[]) => (count(sql), db.one(sql, params));
  return { db: wrapped, reads };
}

async function instance(feed: TopicFeed, clock: FakeClock = fakeClock()) {
  const { db, reads } = counting(gw.database.db);
  const repository = new SqlKeyRepository(db);
  const directory = new KeyDirectory(repository, feed, clock);
  await directory.load();
  const keys = new KeyService(repository, () => true, new CallerUrlGuard({ webhookAllowLocal: false }), new KeyCache(feed, clock), directory, clock);
  return { keys, reads, directory, clock };
}

/** How long the directory waits to read announced keys back together (key-directory.ts). */
const READ_BATCH_MS = 100;

/** Steps the directory's batch out and waits until what was announced has been read back. */
async function settled(directory: KeyDirectory, clock: FakeClock): Promise<void> {
  await clock.tickAsync(READ_BATCH_MS);
  await pollUntil(
    async () => directory.unsettled,
    (n) => n === 0,
    5_000,
    10,
  );
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (e: { status?: number }) => e.status,
  );

test('unknown ids and wrong secrets of known keys are refused without a read of the keys table; the right secret is accepted', async () => {
  const acct = await gw.newAccount();
  const other = await gw.newKey(acct); // made before this instance started: loaded, never cached here
  const { keys, reads, directory, clock } = await instance(new LocalTopicFeed());
  try {
    const { key, secret } = await keys.create(acct.id, { name: 'real' });
    // The creation's announcement read back.
    await settled(directory, clock);
    reads.keys = 0;
    for (let i = 0; i < 50; i++) {
      expect(await refusal(keys.authenticate(`svc_live_${randomBase62(16)}_${randomBase62(40)}`))).toBe(401);
      expect(await refusal(keys.authenticate(`${key.id}_${randomBase62(40)}`))).toBe(401);
      expect(await refusal(keys.authenticate(`${other.id}_${randomBase62(40)}`))).toBe(401);
    }
    expect(reads.keys).toBe(0);
    // The right secrets: the cold one read once, for its record.
    await expect(keys.authenticate(secret)).resolves.toMatchObject({ keyId: key.id });
    await expect(keys.authenticate(other.secret)).resolves.toMatchObject({ keyId: other.id });
    expect(reads.keys).toBeLessThanOrEqual(2);
  } finally {
    directory.stop();
  }
});

test('a key created on one instance authenticates on the other at once; revoked, it is refused on both', async () => {
  const acct = await gw.newAccount();
  const feed = new LocalTopicFeed();
  const clock = fakeClock();
  const a = await instance(feed, clock);
  const b = await instance(feed, clock);
  try {
    const { key, secret } = await a.keys.create(acct.id, {});
    await expect(b.keys.authenticate(secret)).resolves.toMatchObject({ keyId: key.id });
    await expect(a.keys.authenticate(secret)).resolves.toMatchObject({ keyId: key.id });
    await a.keys.revoke(acct.id, key.id);
    expect(await refusal(a.keys.authenticate(secret))).toBe(401);
    expect(await refusal(b.keys.authenticate(secret))).toBe(401);
    await settled(b.directory, clock);
    // Read back: gone from both directories, refused from memory.
    b.reads.keys = 0;
    expect(await refusal(b.keys.authenticate(secret))).toBe(401);
    expect(b.reads.keys).toBe(0);
  } finally {
    a.directory.stop();
    b.directory.stop();
  }
});

test('a directory that may be stale (its feed down) asks the database: a key it has not heard of is still accepted', async () => {
  const acct = await gw.newAccount();
  const down: TopicFeed = {
    live: false,
    publish: async () => undefined,
    subscribe: () => () => undefined,
    caughtUp: async () => false,
    onGap: () => () => undefined,
    close: async () => undefined,
  };
  const { keys, reads, directory } = await instance(down);
  try {
    const made = await gw.newKey(acct); // announced on the gateway's feed, not this one
    await expect(keys.authenticate(made.secret)).resolves.toMatchObject({ keyId: made.id });
    reads.keys = 0;
    expect(await refusal(keys.authenticate(`svc_live_${randomBase62(16)}_${randomBase62(40)}`))).toBe(401);
    expect(reads.keys).toBe(1);
  } finally {
    directory.stop();
  }
});

test('a key created on one instance whose announcement reaches the other late is still accepted there: a refusal waits for the feed to catch up', async () => {
  const acct = await gw.newAccount();
  // Messages reach the listeners 100 ms (on the fake clock) after they are published, in order; caughtUp
  // answers once those published before it are delivered, as a PING on Redis's subscriber connection does.
  const clock = fakeClock();
  const listeners = new Set<(id: string) => void>();
  let pending = Promise.resolve();
  const slow: TopicFeed = {
    live: true,
    publish: async (id) => {
      pending = pending.then(() => new Promise<void>((r) => clock.setTimeout(r, 100))).then(() => listeners.forEach((l) => l(id)));
    },
    subscribe: (l) => (listeners.add(l), () => listeners.delete(l)),
    caughtUp: () => pending.then(() => true),
    onGap: () => () => undefined,
    close: async () => undefined,
  };
  const a = await instance(slow, clock);
  const b = await instance(slow, clock);
  try {
    const { key, secret } = await a.keys.create(acct.id, {});
    // B is asked while the announcement is still on its way: it waits for the feed, then reads the key.
    const authenticated = b.keys.authenticate(secret);
    await clock.whenArmed((t) => t.delayMs === 100 && t.dueInMs > 0);
    await clock.tickAsync(100);
    await expect(authenticated).resolves.toMatchObject({ keyId: key.id });
    // And a stranger's id is still refused, without a read of the keys table.
    await settled(b.directory, clock);
    b.reads.keys = 0;
    expect(await refusal(b.keys.authenticate(`svc_live_${randomBase62(16)}_${randomBase62(40)}`))).toBe(401);
    expect(b.reads.keys).toBe(0);
  } finally {
    a.directory.stop();
    b.directory.stop();
  }
});
