import { isContentPolicyRejection } from '../../../src/providers/shared/upstream-errors';

describe('isContentPolicyRejection', () => {
  it.each([
    [400, { error: { code: 'content_policy_violation', message: 'x' } }],
    [400, { error: { code: 'moderation_blocked', message: 'x', type: 'image_generation_user_error' } }],
    [400, { error: { type: 'invalid_request_error', message: 'Rejected by our safety system.' } }],
    [422, { detail: [{ msg: 'Prompt violates the content policy', type: 'value_error' }] }],
    [422, { detail: 'Flagged by the safety checker' }],
  ])('recognises %s %j', (status, body) => {
    expect(isContentPolicyRejection(status, JSON.stringify(body))).toBe(true);
  });

  it.each([
    [500, { error: { code: 'content_policy_violation' } }],
    [400, { error: { message: 'Invalid value for size', param: 'size' } }],
    [422, { detail: [{ loc: ['body', 'safety_tolerance'], msg: 'must be <= 6', type: 'value_error' }] }],
  ])('does not mistake %s %j for one', (status, body) => {
    expect(isContentPolicyRejection(status, JSON.stringify(body))).toBe(false);
  });
});
