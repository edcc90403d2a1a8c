/**
 * A video job is charged to the balance directly, while chat and image calls are paid from
 * credit leases. When the balance alone falls short because the account's credits sit in a
 * lease, the lease is called back and the job is charged, not refused with a 402 for as long as
 * other calls of the account keep leases open, though the account has the credits.
 */
import { useTestGateway } from '../support/use-test-gateway';

const gw = useTestGateway();

test('credits in idle leases of the account pay for a video job', async () => {
  const acct = await gw.newAccount(16);
  // Four keys, an image call each: four leases, each a share of what the balance had left ...
  const keys = await Promise.all(Array.from({ length: 4 }, (_, i) => gw.newKey(acct, { name: `k${i}` })));
  let spent = 0;
  for (const key of keys) {
    const image = await gw.api('POST', '/v1/images/generations', {
      token: key.secret,
      body: { model: 'svc-creative-v8', prompt: 'a lighthouse', size: '64x64' },
    });
    expect(image.status).toBe(200);
    spent += Number(image.headers.get('x-svc-credits'));
  }
  // ... so that the balance alone no longer covers a 10-credit job, though the account does.
  const row = await gw.gateway.database.db.one<{ balance: string }>(`select balance_micro as balance from accounts where id = ?`, [acct.id]);
  expect(Number(row!.balance)).toBeLessThan(10_000_000);
  expect(16 - spent).toBeGreaterThanOrEqual(10);

  const queued = await gw.api('POST', '/v1/video/queue', {
    token: keys[0].secret,
    body: { model: 'svc-2.5-preview-text-to-video', prompt: 'a kite', resolution: '480p' },
  });
  expect(queued.status).toBe(200);
  expect(queued.body.status).toBe('PROCESSING');
  expect(await gw.balance(acct)).toBeCloseTo(16 - spent - 10, 6);
});
