import { billableUsage, PROMPT_BOUND_FACTOR, PROMPT_BOUND_SLACK } from '../../../src/domain/chat/billable-usage';

const bounds = { promptEstimate: 10, maxCompletion: 200 };
const fallback = () => ({ promptTokens: 10, completionTokens: 3 });

test.each([
  ['missing', undefined],
  ['negative prompt', { promptTokens: -1, completionTokens: 5 }],
  ['negative completion', { promptTokens: 5, completionTokens: -5000 }],
  ['NaN', { promptTokens: NaN, completionTokens: 5 }],
  ['infinite', { promptTokens: 5, completionTokens: Infinity }],
  ['zero in all', { promptTokens: 0, completionTokens: 0 }],
])('a report that cannot be true (%s) is charged as if none came', (_label, reported) => {
  expect(billableUsage(reported, fallback, bounds)).toEqual(fallback());
});

test('a plausible report is the charge as it came, details included, even above the hold', () => {
  const reported = { promptTokens: 39, completionTokens: 200, promptDetails: { cached_tokens: 8 } };
  expect(billableUsage(reported, fallback, bounds)).toBe(reported);
});

test('fractions round up; counts past what the call allowed are cut to it, and the details go', () => {
  expect(billableUsage({ promptTokens: 1.2, completionTokens: 2.01 }, fallback, bounds)).toEqual({ promptTokens: 2, completionTokens: 3 });
  const maxPrompt = 10 * PROMPT_BOUND_FACTOR + PROMPT_BOUND_SLACK;
  expect(billableUsage({ promptTokens: 1e15, completionTokens: 1e15, completionDetails: { reasoning_tokens: 1e15 } }, fallback, bounds)).toEqual({
    promptTokens: maxPrompt,
    completionTokens: 200,
  });
});

test('without a report, what was relayed is charged within what the call allowed (an upstream writing past max_tokens is not the bill)', () => {
  expect(billableUsage(undefined, () => ({ promptTokens: 10, completionTokens: 5_000_000 }), bounds)).toEqual({ promptTokens: 10, completionTokens: 200 });
  expect(billableUsage(undefined, fallback, bounds)).toEqual(fallback());
});
