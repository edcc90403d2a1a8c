/**
 * Purchases where real servers make it hard: two gateway processes sharing PostgreSQL and Redis
 * take 20 deliveries of one paid session at once, split between them, and grant it once; and a
 * delivery while PostgreSQL is away (a TCP proxy this test owns is cut) is a 503, so Stripe sends
 * it again, and the retry after it is back grants it, once. Run in the DATABASE_URL pass only.
 */
import { startTwoGateways, type TwoGateways } from '../support/two-gateways';
import { startFakeStripe, type FakeStripe } from '../support/fake-stripe';
import { pollUntil } from '../support/poll';
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { proxiedDatabaseUrl, type TcpProxy } from '../support/tcp-proxy';
import { useTestGateway } from '../support/use-test-gateway';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { openDatabase } from '../../src/infra/db/orm';

const withPostgres = process.env.DATABASE_URL ? describe : describe.skip;
const withBoth = process.env.DATABASE_URL && process.env.REDIS_URL ? describe : describe.skip;
vi.setConfig({ testTimeout: 120_000 });

const stripeEnv = (stripe: FakeStripe) => ({ STRIPE_SECRET_KEY: stripe.secretKey, STRIPE_WEBHOOK_SECRET: stripe.webhookSecret, STRIPE_API_BASE: stripe.url });

withBoth('two instances', () => {
  let stripe: FakeStripe;
  let two: TwoGateways;

  beforeAll(async () => {
    stripe = await startFakeStripe();
    two = await startTwoGateways('stripe', stripeEnv(stripe));
  });
  afterAll(async () => {
    await two?.close();
    await stripe?.close();
  });

  test('20 deliveries of one paid session, split between two instances, grant it once', async () => {
    const out = await pollUntil(
      async () => two.a.output() + two.b.output(),
      (o) => o.includes('ID token:'),
      20_000,
      50,
    );
    const idToken = /ID token:\s+(\S+)/.exec(out)![1];
    const account = async () =>
      (await (await fetch(`${two.b.url}/account`, { headers: { authorization: `Bearer ${idToken}` } })).json()) as { id: string; balance: number };
    const before = (await account()).balance;
    const made = await fetch(`${two.a.url}/account/checkout`, {
      method: 'POST',
      headers: { authorization: `Bearer ${idToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ credits: 400 }),
    });
    expect(made.status).toBe(200);
    const { id } = (await made.json()) as { id: string };
    const signed = stripe.sign(stripe.complete(id));
    const answers = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const res = await fetch(`${(i % 2 ? two.b : two.a).url}/webhooks/stripe`, {
          method: 'POST',
          headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signed.header },
          body: signed.payload,
        });
        return res.status;
      }),
    );
    expect(answers).toEqual(Array(20).fill(200));
    expect((await account()).balance).toBe(before + 400);

    const database = await openDatabase({ databaseUrl: two.databaseUrl, dataDir: two.dataDir, migrate: false });
    try {
      const grants = await database.db.all(`select amount_micro from ledger_entries where reference = ? and kind = 'grant'`, [id]);
      expect(grants.map((g) => Number(g.amount_micro))).toEqual([400e6]);
      expect(await database.db.all(`select type from account_events where occurrence = ?`, [id])).toEqual([{ type: 'purchase.completed' }]);
      await expectLedgerInvariants(database.db);
    } finally {
      await database.close();
    }
  });
});

withPostgres('PostgreSQL away', () => {
  let stripe: FakeStripe;
  let proxy: TcpProxy;
  let proxiedUrl: string;
  let scratch: { url: string; drop: () => Promise<void> };
  beforeAll(async () => {
    stripe = await startFakeStripe();
    scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_stripecut');
    ({ proxy, url: proxiedUrl } = await proxiedDatabaseUrl(scratch.url));
  });
  const gw = useTestGateway(() => ({ DATABASE_URL: proxiedUrl, ...stripeEnv(stripe) }));
  // Registered after the gateway's fixture: its ledger check and close run first, through the proxy.
  afterAll(async () => {
    await stripe?.close();
    await proxy?.close();
    await scratch?.drop();
  });

  test('a delivery the database cannot take is a 503, so Stripe retries; the retry grants once', async () => {
    stripe.setWebhookUrl(`${gw.url}/webhooks/stripe`);
    const acct = await gw.newAccount();
    const made = await gw.api('POST', '/account/checkout', { token: acct.idToken, body: { credits: 300 } });
    const signed = stripe.sign(stripe.complete(made.body.id));
    await proxy.cut();
    const during = await stripe.send(signed);
    expect([during.status, during.body.error.type]).toEqual([503, 'service_unavailable']);
    await proxy.restore();
    const after = await pollUntil(
      () => stripe.send(signed),
      (r) => r.status !== 503,
    );
    expect(after.status).toBe(200);
    expect(await gw.balance(acct)).toBe(300);
    expect((await stripe.send(signed)).status).toBe(200);
    expect(await gw.balance(acct)).toBe(300);
  });
});
