/**
 * What the simulator's replies say about money is true for the key that called: on the embedded
 * default it serves live keys too, whose calls are charged. Over enough prompts for every one of
 * its sentences to come up, a live key's reply never says nothing was charged while its
 * `x-svc-credits` and balance say otherwise, and a test key's never says it was charged.
 */
import { useTestGateway } from '../support/use-test-gateway';

const gw = useTestGateway();

const SAYS_FREE = /nothing (was|is) charged|not (been )?charged|free of charge|no charge|cost(s)? nothing/i;
const SAYS_CHARGED = /(?<!nothing )\b(was|were|has been) (charged|debited)\b/i;

test.each(['live', 'test'] as const)('a %s key: no reply misstates what the call cost', async (mode) => {
  const acct = await gw.newAccount(100);
  const key = await gw.newKey(acct, { mode });
  let spent = 0;
  for (let i = 0; i < 40; i++) {
    const res = await gw.api('POST', '/v1/chat/completions', {
      token: key.secret,
      body: { model: 'svc-chat-1', messages: [{ role: 'user', content: `question number ${i}` }] },
    });
    expect(res.status).toBe(200);
    const text: string = res.body.choices[0].message.content;
    const credits = Number(res.headers.get('x-svc-credits'));
    expect(credits).toBeGreaterThan(0);
    if (mode === 'live') {
      spent += credits;
      expect(text).not.toMatch(SAYS_FREE);
    } else expect(text).not.toMatch(SAYS_CHARGED);
  }
  expect(await gw.balance(acct)).toBeCloseTo(mode === 'live' ? 100 - spent : 100, 6);
});
