/**
 * Ten streams at once on a balance that covers two: two are admitted, eight refused (for the
 * balance, or with the retry signal while the two hold it), none is charged what it was not
 * admitted for, and nothing is left uncollected; on one instance, and (PostgreSQL + Redis) over
 * two instances sharing the account. The upstream holds every stream open after its first delta
 * until the test releases it, so all ten are in flight together.
 */
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import { writeModelsFile } from '../support/models-file';
import { startTestGateway, type TestGateway } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';

const shared = process.env.DATABASE_URL && process.env.REDIS_URL;

let upstream: FakeOpenAIUpstream;
let models: { path: string; remove: () => void };
let gateways: TestGateway[] = [];

beforeAll(async () => {
  upstream = await startFakeOpenAIUpstream();
  models = writeModelsFile({ 'svc-chat-1': { provider: 'openai-compatible', upstreamModel: 'up', baseUrl: upstream.url, timeoutSeconds: 30 } });
});
// Registered before the first instance's fixture: the held streams end, and the second instance
// (on the first one's database, which goes when the first closes) closes before it.
afterAll(async () => {
  upstream.releaseHeld();
  for (const g of gateways.slice(1)) await g.close();
});
const firstInstance = useTestGateway(() => ({ MODELS_FILE: models.path }));
beforeAll(async () => {
  gateways = [firstInstance, ...(shared ? [await startTestGateway({ MODELS_FILE: models.path, DATABASE_URL: firstInstance.gateway.config.databaseUrl })] : [])];
});
afterAll(async () => {
  await upstream.close();
  models.remove();
});

test(`ten concurrent streams on a balance for two: two admitted, on ${shared ? 'two instances' : 'one instance'}; nothing uncollected`, async () => {
  const [first] = gateways;
  // max_tokens 8,000 at 1 credit per 10k tokens: each stream holds a little over 0.8 credit; 2 credits fit two, not three.
  const acct = await first.newAccount(2);
  const keys = await Promise.all(Array.from({ length: 10 }, () => first.newKey(acct)));
  upstream.setMode('held-stream');
  const opened = await Promise.all(
    keys.map(async (key, i) => {
      const target = gateways[i % gateways.length];
      const res = await fetch(`${target.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8_000, stream: true }),
      });
      return { res, code: res.status === 200 ? 'admitted' : ((await res.json()) as { error: { code: string | null; type: string } }).error };
    }),
  );
  const admitted = opened.filter((o) => o.code === 'admitted');
  expect(admitted).toHaveLength(2);
  for (const o of opened.filter((x) => x.code !== 'admitted')) {
    expect(['insufficient_credits', 'credits_in_flight']).toContain(
      (o.code as { code: string | null; type: string }).code ?? (o.code as { type: string }).type,
    );
  }
  upstream.setMode('ok');
  upstream.releaseHeld();
  for (const o of admitted) expect(await o.res.text()).toContain('data: [DONE]');
  const db = first.gateway.database.db;
  await pollUntil(
    async () => Number((await db.one<{ n: string }>(`select count(*) as n from lease_charges where account_id = ?`, [acct.id]))!.n),
    (n) => n === 2,
    10_000,
    50,
  );
  expect(await db.all(`select * from uncollected_charges where account_id = ?`, [acct.id])).toEqual([]);
  expect(await first.balance(acct)).toBeLessThan(2);
  expect(await first.balance(acct)).toBeGreaterThan(1.5);
});
