/**
 * A key's budgets as its owner sets them, over an in-memory key repository: at most one per
 * period, credits as the daily cap takes them, the day's budget and `dailySpendCap` one and the
 * same, a request naming the day twice differently refused, `budgets` on an edit replacing them
 * all; and what the key then authenticates with (a test key spends nothing, so it carries none).
 */
import { KeyCache } from '../../../src/domain/keys/key-cache';
import { KeyService } from '../../../src/domain/keys/key-service';
import type { UrlGuard } from '../../../src/domain/ports/url-guard';
import { creditsToMicro } from '../../../src/domain/shared/money';
import { LocalTopicFeed } from '../../../src/infra/events/local-topic-feed';
import { FakeKeyRepository } from '../../support/fakes/fake-key-repository';

const urls: UrlGuard = { checkMediaUrl: async (u) => String(u), checkWebhookUrl: async (u) => String(u) };
const keys = () => new KeyService(new FakeKeyRepository(), () => true, urls, new KeyCache(new LocalTopicFeed()));
const micro = creditsToMicro;

/** What a refused input answers: its type, the field it names (REST spelling) and its words. */
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (e: { type: string; param: string | null; message: string }) => ({ type: e.type, param: e.param, message: e.message }),
  );

test("budgets are kept per period in exact micro-credits; the day's is the daily cap, and the key authenticates with all three", async () => {
  const service = keys();
  const { key, secret } = await service.create('acct_a', {
    budgets: [
      { period: 'week', credits: 50 },
      { period: 'day', credits: 12.5 },
      { period: 'month', credits: 0.000001 },
    ],
  });
  expect(key).toMatchObject({ dailySpendCapMicro: micro(12.5), weekBudgetMicro: micro(50), monthBudgetMicro: 1 });
  expect((await service.authenticate(secret)).budgets).toEqual({ day: micro(12.5), week: micro(50), month: 1 });
  // dailySpendCap alone sets the day and leaves the others.
  expect(await service.update('acct_a', key.id, { dailySpendCap: 3 })).toMatchObject({ dailySpendCapMicro: micro(3), weekBudgetMicro: micro(50) });
  // A test key keeps what its owner set, but spends nothing, so it is held to none.
  const test = await service.create('acct_a', { mode: 'test', budgets: [{ period: 'week', credits: 5 }] });
  expect(test.key.weekBudgetMicro).toBe(micro(5));
  expect((await service.authenticate(test.secret)).budgets).toEqual({ day: null, week: null, month: null });
});

test("`budgets` on an edit replaces them all, the day's included; null and [] clear them; both fields agreeing on the day is one", async () => {
  const service = keys();
  const { key } = await service.create('acct_a', { dailySpendCap: 5, budgets: [{ period: 'month', credits: 100 }] });
  expect(key).toMatchObject({ dailySpendCapMicro: micro(5), weekBudgetMicro: null, monthBudgetMicro: micro(100) });
  expect(await service.update('acct_a', key.id, { budgets: [{ period: 'week', credits: 20 }] })).toMatchObject({
    dailySpendCapMicro: null,
    weekBudgetMicro: micro(20),
    monthBudgetMicro: null,
  });
  const same = await service.update('acct_a', key.id, { dailySpendCap: 7, budgets: [{ period: 'day', credits: 7 }] });
  expect(same).toMatchObject({ dailySpendCapMicro: micro(7), weekBudgetMicro: null, monthBudgetMicro: null });
  // The day from dailySpendCap beside budgets that name no day.
  expect(await service.update('acct_a', key.id, { dailySpendCap: 2, budgets: [{ period: 'week', credits: 9 }] })).toMatchObject({
    dailySpendCapMicro: micro(2),
    weekBudgetMicro: micro(9),
  });
  for (const cleared of [null, []]) {
    await service.update('acct_a', key.id, { budgets: [{ period: 'week', credits: 1 }] });
    expect(await service.update('acct_a', key.id, { budgets: cleared })).toMatchObject({
      dailySpendCapMicro: null,
      weekBudgetMicro: null,
      monthBudgetMicro: null,
    });
  }
});

test('a refused budget names its field, and nothing of the key changes', async () => {
  const service = keys();
  const { key } = await service.create('acct_a', { budgets: [{ period: 'week', credits: 10 }] });
  const edit = (body: unknown) => refusal(service.update('acct_a', key.id, body));
  expect(
    await edit({
      budgets: [
        { period: 'week', credits: 1 },
        { period: 'day', credits: 2 },
        { period: 'week', credits: 3 },
      ],
    }),
  ).toEqual({
    type: 'invalid_request_error',
    param: 'budgets[2].period',
    message: expect.stringMatching(/at most one budget per period/),
  });
  expect(await edit({ budgets: [{ period: 'year', credits: 1 }] })).toMatchObject({ param: 'budgets[0].period' });
  expect(await edit({ budgets: [{ period: 'week' }] })).toMatchObject({ param: 'budgets[0].credits', message: expect.stringMatching(/required/) });
  expect(await edit({ budgets: [{ period: 'week', credits: 0 }] })).toMatchObject({ param: 'budgets[0].credits', message: expect.stringMatching(/positive/) });
  expect(await edit({ budgets: [{ period: 'week', credits: 1.0000001 }] })).toMatchObject({
    param: 'budgets[0].credits',
    message: expect.stringMatching(/decimal/),
  });
  expect(await edit({ budgets: [{ period: 'week', credits: 2e9 }] })).toMatchObject({ param: 'budgets[0].credits' });
  expect(await edit({ budgets: [{ period: 'week', credits: 1, limit: 2 }] })).toMatchObject({ param: 'budgets[0].limit', message: "Unknown field 'limit'." });
  expect(await edit({ budgets: { period: 'week', credits: 1 } })).toMatchObject({ param: 'budgets' });
  expect(await edit({ dailySpendCap: 4, budgets: [{ period: 'day', credits: 5 }] })).toEqual({
    type: 'invalid_request_error',
    param: 'dailySpendCap',
    message: expect.stringMatching(/differs from the 'day' budget in 'budgets'/),
  });
  expect(await edit({ dailySpendCap: null, budgets: [{ period: 'day', credits: 5 }] })).toMatchObject({ param: 'dailySpendCap' });
  expect(await refusal(service.create('acct_a', { dailySpendCap: 4, budgets: [{ period: 'day', credits: 4.5 }] }))).toMatchObject({ param: 'dailySpendCap' });
  expect(await service.get('acct_a', key.id)).toMatchObject({ dailySpendCapMicro: null, weekBudgetMicro: micro(10), monthBudgetMicro: null });
});
