/**
 * A key's daily spend cap against its credit leases, through the REST API as an owner and a
 * client see it: a cap lowered while the key holds a lease taken under no cap must not go on
 * spending from that lease (42 credits charged against a cap of 13), and concurrent calls that
 * together fit the cap must not get a 429 `daily_cap_exceeded` with a Retry-After to midnight
 * while the cap's room sits in the key's own lease.
 */
import type { TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';

const gw = useTestGateway();

/** flux-dev: 3 credits an image, served by the simulator for live keys too. */
const IMAGE = { model: 'flux-dev', prompt: 'a lighthouse', size: '64x64' };

async function image(secret: string) {
  const res = await gw.api('POST', '/v1/images/generations', { token: secret, body: IMAGE });
  return {
    status: res.status,
    type: res.body?.error?.type as string | undefined,
    code: res.body?.error?.code as string | undefined,
    retryAfter: res.headers.get('retry-after'),
    credits: res.headers.get('x-svc-credits'),
  };
}

const balanceOf = async (account: TestAccount) => {
  const res = await gw.api('GET', '/account', { token: account.idToken });
  return res.body.balance as number;
};

test('a cap lowered by the owner applies to the next call, though the key holds a lease taken without one', async () => {
  const acct = await gw.newAccount(400);
  const key = await gw.newKey(acct);
  expect(await image(key.secret)).toMatchObject({ status: 200, credits: '3' });
  const patch = await gw.api('PATCH', `/account/api-keys/${key.id}`, { token: acct.idToken, body: { dailySpendCap: 13 } });
  expect(patch.status).toBe(200);
  const outcomes = [];
  for (let i = 0; i < 6; i++) outcomes.push(await image(key.secret));
  // 3 spent; three more make 12; the fifth image would make 15 > 13.
  expect(outcomes.map((o) => o.status)).toEqual([200, 200, 200, 429, 429, 429]);
  expect(outcomes[3]).toMatchObject({ type: 'daily_cap_exceeded' });
  expect(await balanceOf(acct)).toBe(388);
  // Raised again, the key spends again at once.
  await gw.api('PATCH', `/account/api-keys/${key.id}`, { token: acct.idToken, body: { dailySpendCap: 100 } });
  expect(await image(key.secret)).toMatchObject({ status: 200 });
  expect(await balanceOf(acct)).toBe(385);
});

test("concurrent calls that together fit the key's cap are all served; a refusal while they run is the 429 credits_in_flight to retry in a second, never the 429 to midnight", async () => {
  const acct = await gw.newAccount(1000);
  const key = await gw.newKey(acct, { dailySpendCap: 30 });
  const refusals: string[] = [];
  // A client that honours Retry-After: 1 tries again once room may be back (sooner here): when
  // another of the calls has been served, or at once when none is still waiting for its answer.
  let waitingForAnswers = 0;
  let served: Array<() => void> = [];
  const anotherServed = () => (waitingForAnswers === 0 ? Promise.resolve() : new Promise<void>((r) => served.push(r)));
  const answered = (status: number) => {
    waitingForAnswers--;
    // Served, or nobody left who could be: those waiting try again.
    if (status !== 200 && waitingForAnswers > 0) return;
    const waiters = served;
    served = [];
    waiters.forEach((wake) => wake());
  };
  const call = async () => {
    for (let attempt = 0; attempt < 40; attempt++) {
      waitingForAnswers++;
      const out = await image(key.secret);
      answered(out.status);
      if (out.status === 200) return 200;
      refusals.push(`${out.status} ${out.code} ${out.retryAfter}`);
      if (out.code !== 'credits_in_flight' || out.retryAfter !== '1') return out.status;
      await anotherServed();
    }
    return 'gave up';
  };
  // Ten images of 3 credits: exactly the cap.
  expect(await Promise.all(Array.from({ length: 10 }, call))).toEqual(Array(10).fill(200));
  for (const refusal of refusals) expect(refusal).toBe('429 credits_in_flight 1');
  expect(await balanceOf(acct)).toBe(970);
  // The cap is spent now: the eleventh is the 429.
  expect(await image(key.secret)).toMatchObject({ status: 429, type: 'daily_cap_exceeded' });
});
