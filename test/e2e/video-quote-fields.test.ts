/**
 * POST /v1/video/quote holds a field the model does not take to the rule queueing follows (a 400
 * naming it): `duration_seconds` on a video model was ignored and the default price quoted, and
 * motion control quoted `duration`/`resolution` as if they counted. A motion quote sent
 * `duration: "5s"` names `duration`, what was sent, not the `duration_seconds` it lacks.
 */
import { useTestGateway } from '../support/use-test-gateway';

const gw = useTestGateway();
let secret: string;
beforeAll(async () => {
  secret = (await gw.newKey(await gw.newAccount(0))).secret;
});

const quote = (body: object) => gw.api('POST', '/v1/video/quote', { token: secret, body });
const TEXT = 'svc-2.5-preview-text-to-video';
const MOTION = 'svc-v3-motion-control';

test.each([
  [{ model: TEXT, duration_seconds: 10 }, 'duration_seconds'],
  [{ model: TEXT, duration: '10s', resolution: '1080p', duration_seconds: 10 }, 'duration_seconds'],
  [{ model: 'svc-2-7-image-to-video', duration_seconds: 5 }, 'duration_seconds'],
  [{ model: MOTION, duration_seconds: 5, duration: '10s' }, 'duration'],
  [{ model: MOTION, duration_seconds: 5, resolution: '1080p' }, 'resolution'],
  [{ model: MOTION, duration: '5s' }, 'duration'],
])('%j: 400 naming %s', async (body, param) => {
  const res = await quote(body);
  expect(res.status).toBe(400);
  expect(res.body.error).toEqual({ type: 'invalid_request_error', code: null, param, message: expect.stringContaining(`'${param}'`) });
});

test('the fields each model takes still quote, with the defaults for what is left out', async () => {
  expect((await quote({ model: TEXT })).body).toMatchObject({ duration: '5s', resolution: '720p', credits: 15 });
  expect((await quote({ model: TEXT, duration: '10s', resolution: '1080p' })).body).toMatchObject({ duration: '10s', resolution: '1080p', credits: 50 });
  expect((await quote({ model: MOTION, duration_seconds: 5 })).body).toMatchObject({ model: MOTION, duration: '5s', credits: 25 });
  const missing = await quote({ model: MOTION });
  expect([missing.status, missing.body.error.param]).toEqual([400, 'duration_seconds']);
});

test('GraphQL videoQuote answers the same refusal', async () => {
  const res = await gw.api('POST', '/graphql', {
    token: secret,
    body: { query: `{ videoQuote(input: { model: "${TEXT}", durationSeconds: 10 }) { credits } }` },
  });
  // Named as the GraphQL input spells the field.
  expect(res.body.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'durationSeconds' });
  expect(res.body.errors[0].message).toContain('durationSeconds');
  expect(res.body.errors[0].message).not.toContain('duration_seconds');
});

test.each([[31], [1e20], [Number.MAX_SAFE_INTEGER + 2]])(
  'duration_seconds %d is a 400 that names its real bound (30), not the largest safe integer',
  async (seconds) => {
    const res = await quote({ model: MOTION, duration_seconds: seconds });
    expect([res.status, res.body.error.param]).toEqual([400, 'duration_seconds']);
    expect(res.body.error.message).toContain('30');
    expect(res.body.error.message).not.toContain('9007199254740991');
  },
);
