/**
 * Webhook receivers that misbehave: any 2xx within the timeout is a delivery whatever the body
 * (200 with 5 MB, 200 trickled over 20 s); a 302 is a failure and is not followed; no answer is a
 * failure. Failures are retried to 3 attempts; the delivery log records status, duration and
 * attempt. Short retry delays so the test takes seconds; the timeout is 5 s, not shorter: at 1 s a
 * loaded runner logged the /redirect receiver's first attempt as `timeout` instead of its 302.
 * Only /silent pays it (3 attempts x 5 s).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';

const TIMEOUT_S = 5;
let receiver: Server;
let base: string;
const hits: Record<string, number> = {};
const open = new Set<ServerResponse>();

// Registered before the gateway's fixture, so the receiver closes before the gateway.
afterAll(async () => {
  for (const res of open) res.destroy();
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
});
const gw = useTestGateway({
  SIMULATOR_VIDEO_SECONDS: '0.2',
  WEBHOOK_ALLOW_LOCAL: '1',
  WEBHOOK_RETRY_DELAYS: '0.2,0.2',
  WEBHOOK_TIMEOUT_SECONDS: String(TIMEOUT_S),
});
beforeAll(async () => {
  receiver = createServer((req, res) => {
    const path = req.url ?? '';
    hits[path] = (hits[path] ?? 0) + 1;
    req.resume();
    req.on('end', () => {
      if (path === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 5 * 1024 * 1024 });
        res.end(Buffer.alloc(5 * 1024 * 1024, 120));
      } else if (path === '/trickle') {
        // 200 at once, then one byte a second for 20 s.
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('.');
        open.add(res);
        let n = 0;
        const t = setInterval(() => {
          if (++n > 20 || res.destroyed) {
            clearInterval(t);
            res.end();
            return;
          }
          res.write('.');
        }, 1_000);
        res.on('close', () => clearInterval(t));
      } else if (path === '/redirect') {
        res.writeHead(302, { location: `${base}/big` });
        res.end();
      } else {
        open.add(res); // /silent: never answers
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

async function jobWithWebhook(path: string) {
  const acct = await gw.newAccount(100);
  const key = await gw.newKey(acct);
  const set = await gw.api('PATCH', `/account/api-keys/${key.id}/webhook`, { token: acct.idToken, body: { url: `${base}${path}` } });
  expect(set.status).toBe(200);
  const queued = await gw.api('POST', '/v1/video/queue', {
    token: key.secret,
    body: { model: 'svc-2.5-preview-text-to-video', prompt: path, resolution: '480p' },
  });
  expect(queued.status).toBe(200);
  return { acct, key };
}

const deliveries = async (acct: { idToken: string }, keyId: string) =>
  (await gw.api('GET', `/account/api-keys/${keyId}/webhook/deliveries`, { token: acct.idToken })).body.data as any[];

test('200 with a 5 MB body and 200 trickled over 20 s are delivered on attempt 1; 302 and no answer are retried to 3 attempts', async () => {
  const cases = await Promise.all(['/big', '/trickle', '/redirect', '/silent'].map(async (p) => ({ path: p, ...(await jobWithWebhook(p)) })));
  const logs = await Promise.all(
    cases.map(({ path, acct, key }) =>
      pollUntil(
        () => deliveries(acct, key.id),
        (d) => d.length >= (path === '/big' || path === '/trickle' ? 1 : 3),
        40_000,
        100,
      ),
    ),
  );
  // Each delivery is over (nothing left to send), so no wrong extra retry can still show up.
  for (const log of logs) {
    await pollUntil(
      async () =>
        Number(
          (await gw.gateway.database.db.one<{ n: string }>(`select count(*) as n from work_items where kind = 'webhook_delivery' and ref = ?`, [
            log[0].deliveryId,
          ]))!.n,
        ),
      (n) => n === 0,
      20_000,
      50,
    );
  }
  const [big, trickle, redirect, silent] = await Promise.all(cases.map(({ acct, key }) => deliveries(acct, key.id)));
  expect(logs).toHaveLength(4);
  expect(big).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200, error: null, durationMs: expect.any(Number) })]);
  expect(trickle).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200, error: null })]);
  // Counted at the headers: the body is drained for at most a second, so the attempt ends far
  // before the 20 s trickle, and before the timeout (a drain that ran on to the timeout fails: no error here).
  expect(redirect.map((d) => [d.attempt, d.statusCode, d.error])).toEqual([
    [3, 302, 'HTTP 302'],
    [2, 302, 'HTTP 302'],
    [1, 302, 'HTTP 302'],
  ]);
  expect(silent.map((d) => [d.attempt, d.statusCode, d.error])).toEqual([
    [3, null, 'timeout'],
    [2, null, 'timeout'],
    [1, null, 'timeout'],
  ]);
  // The redirect was never followed: /big was only hit by its own key's single delivery.
  expect(hits['/big']).toBe(1);
  expect(hits['/redirect']).toBe(3);
}, 60_000);
