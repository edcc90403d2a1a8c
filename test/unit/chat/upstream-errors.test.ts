import { errorForStatus, retryAfterSecondsOf, scrubUpstreamText } from '../../../src/providers/shared/upstream-errors';

const scrub = {
  secrets: ['https://api.upstream.example/v1', 'api.upstream.example', 'sk-live-upstream-secret'],
  model: { upstream: 'gpt-4o-2024-08-06', public: 'svc-chat-1' },
};

describe('upstream errors', () => {
  test('a 400 blaming the request is a readable 400 with the upstream param, scrubbed', () => {
    const body = JSON.stringify({
      error: {
        message: "Invalid schema for 'gpt-4o-2024-08-06' at https://api.upstream.example/v1/x (key sk-live-upstream-secret; Bearer abc.def)",
        param: 'response_format',
        code: 'bad',
      },
    });
    const err = errorForStatus(400, body, scrub);
    expect(err).toMatchObject({ type: 'invalid_request_error', status: 400, param: 'response_format', code: 'bad' });
    expect(err.message).toContain("Invalid schema for 'svc-chat-1'");
    for (const secret of ['gpt-4o', 'api.upstream.example', 'sk-live', 'abc.def', 'https://']) expect(err.message).not.toContain(secret);
  });

  test("the provider's code is passed on when it is a plain token (agent frameworks act on context_length_exceeded), upstream_rejected otherwise", () => {
    const withCode = (code: unknown) => errorForStatus(400, JSON.stringify({ error: { message: 'm', code } }), scrub).code;
    expect(withCode('context_length_exceeded')).toBe('context_length_exceeded');
    expect(withCode('INVALID_ARGUMENT')).toBe('INVALID_ARGUMENT');
    for (const odd of [undefined, null, 42, '', 'x y', '<script>', 'sk-live-upstream-secret', 'gpt-4o-2024-08-06', 'a'.repeat(65), '_leading'])
      expect(withCode(odd)).toBe('upstream_rejected');
    // A code that would speak of the caller's own key, balance or limits here is the provider's business.
    for (const ours of ['invalid_api_key', 'insufficient_quota', 'insufficient_credits', 'rate_limit_exceeded', 'model_forbidden'])
      expect(withCode(ours)).toBe('upstream_rejected');
  });

  test('404 is not_found, 422 is a 400, FastAPI detail lists are read', () => {
    expect(errorForStatus(404, '{"error":{"message":"nope"}}', scrub)).toMatchObject({ type: 'not_found_error', status: 404 });
    const fastapi = JSON.stringify({ detail: [{ loc: ['body', 'messages', 0], msg: 'field required', type: 'missing' }] });
    expect(errorForStatus(422, fastapi, scrub)).toMatchObject({ status: 400, param: 'messages.0', message: expect.stringContaining('field required') });
  });

  test('auth failures, rate limits, 5xx and garbage stay 502, and a param that is not a name is dropped', () => {
    for (const status of [401, 403, 429, 500, 503]) expect(errorForStatus(status, '{"error":{"message":"x"}}', scrub).status).toBe(502);
    expect(errorForStatus(400, 'not json', scrub)).toMatchObject({
      status: 400,
      message: 'The model provider rejected the request: The model provider rejected the request.',
    });
    expect(errorForStatus(400, '{"error":{"message":"m","param":"a b; drop table"}}', scrub).param).toBeNull();
  });

  test('without a scrub (callers that cannot name the model) a 400 stays a 502', () => {
    expect(errorForStatus(400, '{"error":{"message":"x"}}').status).toBe(502);
  });

  test('long messages are bounded', () => {
    expect(scrubUpstreamText('x'.repeat(5000), scrub).length).toBeLessThanOrEqual(501);
  });
});

describe('an upstream that says when to come back (429, 503)', () => {
  test('stays a 502 upstream_error (the provider failed) with its own code and the Retry-After it gave, within 1–60 s', () => {
    expect(errorForStatus(429, '{}', undefined, '7')).toMatchObject({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_rate_limited',
      retryAfterSeconds: 7,
    });
    expect(errorForStatus(503, '{}', undefined, '3600')).toMatchObject({ status: 502, code: 'upstream_unavailable', retryAfterSeconds: 60 });
    expect(errorForStatus(429, '{}', undefined, '0').retryAfterSeconds).toBe(1);
    expect(errorForStatus(429, '{}').retryAfterSeconds).toBeUndefined();
    expect(errorForStatus(429, '{}', undefined, 'soon').retryAfterSeconds).toBeUndefined();
    expect(errorForStatus(500, '{}', undefined, '7').retryAfterSeconds).toBeUndefined();
  });

  test('an HTTP date is read as seconds from now', () => {
    const now = Date.parse('2026-11-24T10:00:00Z');
    expect(retryAfterSecondsOf('Tue, 24 Nov 2026 10:00:12 GMT', now)).toBe(12);
    expect(retryAfterSecondsOf('Tue, 24 Nov 2026 09:00:00 GMT', now)).toBe(1);
  });
});
