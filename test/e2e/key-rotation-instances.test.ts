/**
 * A key's rotation and expiry on two instances sharing one PostgreSQL database and Redis, on one
 * fake clock the test steps: a key rotated on A takes both secrets on B once B's key-change feed
 * has brought the news, though B had the key cached; when the grace ends the replaced secret is
 * refused on both, and the new one still answers; with no grace it is refused on B at once; an
 * expiry set on A is applied on B from its cached record. Runs in the DATABASE_URL + REDIS_URL pass.
 */
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { postgresTemplate } from '../support/database-template';
import { fakeClock } from '../support/fake-clock';
import { useFixture } from '../support/fixture';
import { startTestGateway, type TestAccount, type TestGateway } from '../support/gateway-harness';

const shared = process.env.DATABASE_URL && process.env.REDIS_URL ? describe : describe.skip;

shared('key rotation and expiry across two instances', () => {
  const clock = fakeClock();
  let scratch: { url: string; drop: () => Promise<void> };
  beforeAll(async () => {
    scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_rotation', postgresTemplate());
  });
  const instance = (name: string) =>
    useFixture(
      name,
      () => startTestGateway({ DATABASE_URL: scratch.url, WORKER_CONCURRENCY: '0' }, { clock }),
      (gw) => gw.close(),
    );
  const a = instance('instance A');
  const b = instance('instance B');
  afterAll(async () => {
    await scratch?.drop();
  });

  let acct: TestAccount;
  beforeAll(async () => {
    acct = await a.newAccount(1);
  });

  const status = async (gw: TestGateway, secret: string) => {
    const res = await gw.api('GET', '/v1/models', { token: secret });
    return res.status === 200 ? 200 : `${res.status} ${res.body.error?.code}`;
  };
  /** Resolves once `gw`'s key-change feed has brought the news of `keyId` (its cache and directory have heard it first). */
  const heardOf = (gw: TestGateway, keyId: string) =>
    new Promise<void>((resolve) => {
      const off = gw.gateway.services.keyChanges.subscribe((id) => {
        if (id !== keyId) return;
        off();
        resolve();
      });
    });
  const rotate = (keyId: string, graceSeconds: number) =>
    a.api('POST', `/account/api-keys/${keyId}/rotate`, { token: acct.idToken, body: { graceSeconds } }).then((r) => {
      expect(r.status).toBe(200);
      return r.body as { key: string; rotatedAt: string };
    });

  test('a key rotated on A takes both secrets on B until the grace ends, then only the new one on both', async () => {
    const key = await a.newKey(acct);
    for (const gw of [a, b]) expect(await status(gw, key.secret)).toBe(200); // cached on both
    const heard = heardOf(b, key.id);
    const rotated = await rotate(key.id, 120);
    await heard;
    for (const gw of [a, b]) {
      expect(await status(gw, key.secret)).toBe(200);
      expect(await status(gw, rotated.key)).toBe(200);
    }
    const graceEnds = Date.parse(rotated.rotatedAt) + 120_000;
    clock.stepWall(graceEnds - 1 - clock.now());
    for (const gw of [a, b]) expect(await status(gw, key.secret)).toBe(200);
    clock.stepWall(1);
    for (const gw of [b, a]) {
      expect(await status(gw, key.secret)).toBe('401 invalid_api_key');
      expect(await status(gw, rotated.key)).toBe(200);
    }
  });

  test('with graceSeconds 0 the replaced secret is refused on B as soon as B hears of the rotation', async () => {
    const key = await a.newKey(acct);
    expect(await status(b, key.secret)).toBe(200);
    const heard = heardOf(b, key.id);
    const rotated = await rotate(key.id, 0);
    await heard;
    expect(await status(b, key.secret)).toBe('401 invalid_api_key');
    expect(await status(b, rotated.key)).toBe(200);
  });

  test('an expiry set on A applies on B, which had the key cached: api_key_expired from its moment', async () => {
    const key = await a.newKey(acct);
    expect(await status(b, key.secret)).toBe(200);
    const heard = heardOf(b, key.id);
    const expiresAt = new Date(clock.now() + 30_000).toISOString();
    expect((await a.api('PATCH', `/account/api-keys/${key.id}`, { token: acct.idToken, body: { expiresAt } })).status).toBe(200);
    await heard;
    clock.stepWall(29_999);
    expect(await status(b, key.secret)).toBe(200);
    clock.stepWall(1);
    for (const gw of [b, a]) expect(await status(gw, key.secret)).toBe('401 api_key_expired');
  });
});
