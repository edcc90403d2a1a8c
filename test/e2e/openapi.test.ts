/**
 * docs/openapi.yaml against the gateway: GET /openapi.json serves it; it is well-formed OpenAPI
 * 3.1 whose schemas compile; every route the Express app and the JSON lane register is in it and
 * every operation in it is served; one call of every documented operation, answered with success
 * and with a documented error, agrees with it; and the check every TestGateway.api call goes
 * through refuses what the document does not describe.
 */
import { makePng } from '../support/fake-openai-upstream';
import { ADMIN_TOKEN, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway-harness';
import { writeModelsFile } from '../support/models-file';
import { pollUntil } from '../support/poll';
import { checkExchange, type Exchange } from '../support/openapi-check';
import { startFakeStripe, type FakeStripe } from '../support/fake-stripe';
import { findOperation, openApi } from '../support/openapi-schemas';
import { documentProblems, documentedOperations, registeredRoutes, shapeOf } from '../support/openapi-structure';

let gw: TestGateway;
let acct: TestAccount;
let key: { id: string; secret: string };
let stripe: FakeStripe;
const models = writeModelsFile({});
beforeAll(async () => {
  stripe = await startFakeStripe();
  gw = await startTestGateway({
    MODELS_FILE: models.path,
    WEBHOOK_ALLOW_LOCAL: '1',
    SIMULATOR_VIDEO_SECONDS: '2',
    STRIPE_SECRET_KEY: stripe.secretKey,
    STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
    STRIPE_API_BASE: stripe.url,
  });
  acct = await gw.newAccount(1000);
  key = await gw.newKey(acct);
});
afterAll(async () => {
  await gw.close();
  await stripe.close();
  models.remove();
});

/** What each call answered, by operation: the last test requires a success and an error of each. */
const answered = new Map<string, Set<number>>();

/** One exchange, redirects not followed, checked against the document like every api() call. */
async function call(method: string, target: string, opts: { token?: string; json?: unknown; body?: string | Buffer; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body = opts.body;
  if (opts.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.json);
  }
  const res = await fetch(gw.url + target, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  const requestBody = Buffer.isBuffer(body) ? body.toString('latin1') : body;
  const op = checkExchange({ method, target, requestHeaders: headers, requestBody, status: res.status, responseHeaders: res.headers, responseBody: text });
  if (op) answered.set(op.id, (answered.get(op.id) ?? new Set()).add(res.status));
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) as Record<string, any> };
}

const sample = (template: string) => template.replace(/\{[^}]+\}/g, 'sample1');

test('the document is OpenAPI 3.1: its structure holds and every schema compiles under JSON Schema 2020-12, strictly', () => {
  expect(documentProblems()).toEqual([]);
});

test('GET /openapi.json answers the document, public and cacheable', async () => {
  const res = await call('GET', '/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(res.headers.get('cache-control')).toBe('public, max-age=300');
  expect(res.json()).toEqual(openApi().doc);
  expect((await call('GET', '/openapi.json?a=1&a=2')).status).toBe(400);
});

test('every route the Express app and the JSON lane register is documented, and every documented operation is served', () => {
  const { routes, mounts } = registeredRoutes(gw.gateway.rest.app);
  const documented = documentedOperations();
  const has = (method: string, path: string) => documented.some((d) => d.method === method && shapeOf(d.template) === shapeOf(path));
  expect(routes.filter((r) => typeof r.path === 'string' && !has(r.method, r.path)).map((r) => `${r.method} ${String(r.path)}`)).toEqual([]);
  for (const r of routes.filter((r): r is { method: string; path: RegExp } => r.path instanceof RegExp)) {
    expect([r.method, documented.some((d) => d.method === r.method && r.path.test(sample(d.template)))]).toEqual([r.method, true]);
  }
  expect(gw.gateway.rest.jsonLanePaths.filter((path) => !has('post', path))).toEqual([]);
  expect(gw.gateway.rest.jsonLanePaths.length).toBeGreaterThan(0);
  // Apollo and the console's static files answer under their mounts, not as routes of their own.
  const servedByMounts = new Map([
    ['get /graphql', '/graphql'],
    ['post /graphql', '/graphql'],
    ['get /console/assets/{asset}', '/console'],
  ]);
  const served = (d: { method: string; template: string }) => {
    const mount = servedByMounts.get(`${d.method} ${d.template}`);
    if (mount) return mounts.includes(mount);
    return routes.some(
      (r) => r.method === d.method && (typeof r.path === 'string' ? shapeOf(r.path) === shapeOf(d.template) : r.path.test(sample(d.template))),
    );
  };
  expect(documented.filter((d) => !served(d)).map((d) => `${d.method} ${d.template}`)).toEqual([]);
});

const exchange = (over: Partial<Exchange>): Exchange => ({
  method: 'GET',
  target: '/v1/models',
  requestHeaders: { authorization: 'Bearer svc_live_x' },
  status: 200,
  responseHeaders: new Headers({ 'content-type': 'application/json', 'x-request-id': 'req_abc' }),
  responseBody: JSON.stringify({ object: 'list', data: [] }),
  ...over,
});

test('the check refuses an exchange the document does not describe, naming the operation and what disagrees', () => {
  expect(checkExchange(exchange({}))?.id).toBe('listModels');
  const refusal = (over: Partial<Exchange>, options = {}) => {
    try {
      checkExchange(exchange(over), options);
      return 'accepted';
    } catch (err) {
      return (err as Error).message;
    }
  };
  expect(refusal({ responseBody: JSON.stringify({ object: 'list' }) })).toMatch(/listModels .*response body: \(root\) must have required property 'data'/);
  expect(refusal({ status: 418 })).toMatch(/listModels .*status 418 is not documented/);
  expect(refusal({ responseHeaders: new Headers({ 'content-type': 'application/json' }) })).toMatch(/response header 'x-request-id' is missing/);
  expect(refusal({ responseHeaders: new Headers({ 'content-type': 'text/plain', 'x-request-id': 'req_abc' }) })).toMatch(/Content-Type 'text\/plain'/);
  expect(refusal({ target: '/v1/models?limit=2' })).toMatch(/the request is not one the document allows, yet it succeeded: query parameter 'limit'/);
  expect(refusal({ requestHeaders: {} })).toMatch(/no Authorization header/);
  expect(refusal({ method: 'DELETE' })).toMatch(/no operation DELETE \/v1\/models is documented/);
  const notFound = JSON.stringify({ error: { message: 'Unknown route', type: 'not_found_error', code: 'route_not_found', param: null } });
  expect(refusal({ target: '/nope', status: 404, responseBody: notFound }, { unchecked: true })).toBe('accepted');
  expect(refusal({ target: '/nope', status: 404, responseBody: '{}' }, { unchecked: true })).toMatch(/must have required property 'error'/);
  expect(refusal({ target: '/v1/models?junk=1' }, { unchecked: true })).toMatch(/sent unchecked was answered 200, not an error/);
  // A wrong request may be refused with a documented error; the error's type must be its status's.
  const badRequest = JSON.stringify({ error: { message: 'no', type: 'invalid_request_error', code: null, param: 'model' } });
  const chat = {
    method: 'POST',
    target: '/v1/chat/completions',
    requestHeaders: { authorization: 'Bearer k', 'content-type': 'application/json' },
    requestBody: '{}',
  };
  expect(refusal({ ...chat, status: 400, responseBody: badRequest })).toBe('accepted');
  expect(refusal({ ...chat, status: 402, responseBody: badRequest })).toMatch(/createChatCompletion .*\/error\/type must be equal to constant/);
  // An event stream's events are checked one by one.
  const stream = { ...chat, requestBody: '{"stream":true}', responseHeaders: new Headers({ 'content-type': 'text/event-stream', 'x-request-id': 'req_abc' }) };
  expect(refusal({ ...stream, responseBody: 'data: {"id":"c","object":"chat.completion.chunk"}\n\ndata: [DONE]\n\n' })).toMatch(/event 0: .*required property/);
  expect(findOperation('GET', '/console/config.json')?.op.id).toBe('getConsoleConfig');
});

describe('one call of every documented operation, with success and with a documented error', () => {
  const chat = { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }] };
  let responseId: string;
  let mediaPath: string;

  test('/v1: the key, models, chat, Responses', async () => {
    const t = key.secret;
    expect((await call('GET', '/v1/models', { token: t })).status).toBe(200);
    expect((await call('GET', '/v1/models')).status).toBe(401);
    expect((await call('GET', '/v1/models/svc-chat-1', { token: t })).status).toBe(200);
    expect((await call('GET', '/v1/models/nope', { token: t })).status).toBe(404);
    expect((await call('GET', '/v1/key', { token: t })).status).toBe(200);
    expect((await call('GET', '/v1/key')).status).toBe(401);
    expect((await call('POST', '/v1/chat/completions', { token: t, json: chat })).status).toBe(200);
    const stream = await call('POST', '/v1/chat/completions', { token: t, json: { ...chat, stream: true } });
    expect([stream.status, stream.text.trimEnd().endsWith('data: [DONE]')]).toEqual([200, true]);
    expect((await call('POST', '/v1/chat/completions', { token: t, json: { model: 'svc-chat-1' } })).status).toBe(400);
    const created = await call('POST', '/v1/responses', { token: t, json: { model: 'svc-chat-1', input: 'hi' } });
    expect(created.status).toBe(200);
    responseId = created.json().id as string;
    expect((await call('POST', '/v1/responses', { token: t, json: { model: 'svc-chat-1', input: 'hi', stream: true } })).status).toBe(200);
    expect((await call('POST', '/v1/responses', { token: t, json: { model: 'svc-chat-1' } })).status).toBe(400);
    expect((await call('POST', '/v1/responses/input_tokens', { token: t, json: { model: 'svc-chat-1', input: 'hi' } })).status).toBe(200);
    expect((await call('POST', '/v1/responses/input_tokens', { token: t, json: { input: 'hi' } })).status).toBe(400);
    expect((await call('GET', `/v1/responses/${responseId}`, { token: t })).status).toBe(200);
    expect((await call('GET', '/v1/responses/resp_missing', { token: t })).status).toBe(404);
    expect((await call('GET', `/v1/responses/${responseId}/input_items?limit=1`, { token: t })).status).toBe(200);
    expect((await call('GET', `/v1/responses/${responseId}/input_items?limit=0`, { token: t })).status).toBe(400);
    expect((await call('POST', `/v1/responses/${responseId}/cancel`, { token: t })).json().error.code).toBe('response_not_cancellable');
    expect((await call('POST', '/v1/responses/resp_missing/cancel', { token: t })).status).toBe(404);
    expect((await call('DELETE', `/v1/responses/${responseId}`, { token: t })).status).toBe(200);
    expect((await call('DELETE', `/v1/responses/${responseId}`, { token: t })).status).toBe(404);
  });

  test('/v1: images, video, and the media they make', async () => {
    const t = key.secret;
    const image = await call('POST', '/v1/images/generations', { token: t, json: { prompt: 'a lighthouse', size: '256x256' } });
    expect(image.status).toBe(200);
    mediaPath = new URL(image.json().data[0].url as string).pathname;
    expect((await call('POST', '/v1/images/generations', { token: t, json: { prompt: 'a lighthouse', n: 9 } })).status).toBe(400);
    const form = new FormData();
    form.append('prompt', 'a hat');
    form.append('image', new Blob([makePng(32, 32)], { type: 'image/png' }), 'in.png');
    const multipart = new Response(form);
    const edit = { token: t, body: Buffer.from(await multipart.arrayBuffer()), headers: { 'content-type': multipart.headers.get('content-type')! } };
    expect((await call('POST', '/v1/images/edits', edit)).status).toBe(200);
    expect((await call('POST', '/v1/images/edits', { token: t, json: { prompt: 'a hat' } })).status).toBe(400);
    const video = { model: 'svc-2.5-preview-text-to-video', prompt: 'waves', duration: '5s', resolution: '480p' };
    expect((await call('POST', '/v1/video/quote', { token: t, json: { model: video.model, duration: '5s', resolution: '480p' } })).status).toBe(200);
    expect((await call('POST', '/v1/video/quote', { token: t, json: { model: 'nope' } })).status).toBe(404);
    const queued = await call('POST', '/v1/video/queue', { token: t, json: video });
    expect(queued.status).toBe(200);
    expect((await call('POST', '/v1/video/queue', { token: t, json: { model: video.model, duration: '7s' } })).status).toBe(400);
    const motion = { image_url: 'https://example.com/a.png', video_url: 'https://example.com/a.mp4', duration_seconds: 2 };
    expect((await call('POST', '/v1/video/motion-control', { token: t, json: motion })).status).toBe(200);
    expect((await call('POST', '/v1/video/motion-control', { token: t, json: { duration_seconds: 2 } })).status).toBe(400);
    expect((await call('POST', '/v1/video/retrieve', { token: t, json: { id: queued.json().id } })).status).toBe(200);
    expect((await call('POST', '/v1/video/retrieve', { token: t, json: { id: 'vid_missing' } })).status).toBe(404);
    expect((await call('GET', mediaPath)).status).toBe(200);
    expect((await call('GET', mediaPath, { headers: { range: 'bytes=0-9' } })).status).toBe(206);
  });

  test("/v1: videos in OpenAI's shape, cancel and the job list", async () => {
    // A key of its own: the jobs here would pass the video rate limit of the one above.
    const t = (await gw.newKey(acct)).secret;
    const video = { model: 'svc-2.5-preview-text-to-video', prompt: 'waves', seconds: '5', size: '854x480' };
    const create = () => call('POST', '/v1/videos', { token: t, json: video });
    const kept = await create();
    expect([kept.status, kept.json().object]).toEqual([200, 'video']);
    // Asked at once, while the simulator still makes it (SIMULATOR_VIDEO_SECONDS): nothing to download or delete yet.
    const id = kept.json().id as string;
    expect((await call('GET', `/v1/videos/${id}/content`, { token: t })).json().error.code).toBe('video_not_ready');
    expect((await call('DELETE', `/v1/videos/${id}`, { token: t })).json().error.type).toBe('video_not_deletable');
    const [cancelledHere, cancelledThere] = [await create(), await create()];
    expect((await call('POST', '/v1/videos', { token: t, json: { ...video, size: '7x7' } })).json().error.param).toBe('size');
    expect((await call('POST', `/v1/videos/${cancelledHere.json().id}/cancel`, { token: t })).json().error).toEqual({
      code: 'cancelled',
      message: expect.any(String),
    });
    expect((await call('POST', `/v1/videos/${cancelledHere.json().id}/cancel`, { token: t })).status).toBe(409);
    expect((await call('POST', '/v1/video/cancel', { token: t, json: { id: cancelledThere.json().id } })).json().reason).toBe('cancelled');
    expect((await call('POST', '/v1/video/cancel', { token: t, json: { id: cancelledThere.json().id } })).json().error.type).toBe('video_not_cancellable');
    expect((await call('GET', '/v1/videos?limit=2', { token: t })).json().has_more).toBe(true);
    expect((await call('GET', '/v1/videos?limit=0', { token: t })).status).toBe(400);
    expect((await call('GET', '/v1/video/jobs?status=FAILED&first=1', { token: t })).json().data[0].reason).toBe('cancelled');
    expect((await call('GET', '/v1/video/jobs?first=0', { token: t })).status).toBe(400);
    const done = await pollUntil(
      () => call('GET', `/v1/videos/${id}`, { token: t }),
      (r) => r.json().status === 'completed',
    );
    expect(done.json().progress).toBe(100);
    expect((await call('GET', '/v1/videos/vid_missing', { token: t })).status).toBe(404);
    expect((await call('GET', `/v1/videos/${id}/content`, { token: t })).headers.get('content-type')).toBe('video/mp4');
    expect((await call('GET', `/v1/videos/${id}/content?variant=thumbnail`, { token: t, headers: { range: 'bytes=0-7' } })).status).toBe(206);
    expect((await call('GET', `/v1/videos/${id}/content?variant=thumbnail`, { token: t, headers: { range: 'bytes=99999999-' } })).status).toBe(416);
    expect((await call('GET', `/v1/videos/${id}/content?variant=spritesheet`, { token: t })).json().error.param).toBe('variant');
    expect((await call('DELETE', `/v1/videos/${id}`, { token: t })).json()).toEqual({ id, object: 'video.deleted', deleted: true });
    expect((await call('DELETE', `/v1/videos/${id}`, { token: t })).status).toBe(404);
    expect((await call('GET', mediaPath, { headers: { range: 'bytes=99999999-' } })).status).toBe(416);
    expect((await call('GET', mediaPath.replace(/\/[^/]+$/, '/wrong.png'))).status).toBe(404);
  });

  test('/account and /admin', async () => {
    const id = acct.idToken;
    expect((await call('GET', '/account', { token: id })).status).toBe(200);
    expect((await call('GET', '/account', { token: key.secret })).status).toBe(401);
    expect((await call('PATCH', '/account', { token: id, json: { lowBalanceAlert: 5 } })).status).toBe(200);
    expect((await call('PATCH', '/account', { token: id, json: { lowBalanceAlert: 0 } })).status).toBe(400);
    expect((await call('PATCH', '/account/webhook', { token: id, json: { url: 'http://127.0.0.1:9/hook' } })).status).toBe(200);
    expect((await call('PATCH', '/account/webhook', { token: id, json: {} })).status).toBe(400);
    expect((await call('GET', '/account/webhook/deliveries?limit=10', { token: id })).status).toBe(200);
    expect((await call('GET', '/account/webhook/deliveries?limit=0', { token: id })).status).toBe(400);
    expect((await call('GET', '/account/api-keys', { token: id })).status).toBe(200);
    expect((await call('GET', '/account/api-keys')).status).toBe(401);
    const made = await call('POST', '/account/api-keys', { token: id, json: { name: 'spare', mode: 'test' } });
    expect(made.status).toBe(201);
    const spare = `/account/api-keys/${made.json().id}`;
    expect((await call('POST', '/account/api-keys', { token: id, json: { mode: 'x' } })).status).toBe(400);
    expect((await call('PATCH', spare, { token: id, json: { name: 'renamed' } })).status).toBe(200);
    expect((await call('PATCH', '/account/api-keys/svc_live_AAAAAAAAAAAAAAAA', { token: id, json: { name: 'x' } })).status).toBe(404);
    expect((await call('POST', `${spare}/rotate`, { token: id, json: { graceSeconds: 60 } })).status).toBe(200);
    expect((await call('POST', `${spare}/rotate`, { token: id })).status).toBe(200);
    expect((await call('POST', `${spare}/rotate`, { token: id, json: { graceSeconds: -1 } })).status).toBe(400);
    expect((await call('PATCH', `${spare}/webhook`, { token: id, json: { url: 'http://127.0.0.1:9/hook' } })).status).toBe(200);
    expect((await call('PATCH', `${spare}/webhook`, { token: id, json: {} })).status).toBe(400);
    expect((await call('GET', `${spare}/webhook/deliveries?limit=10`, { token: id })).status).toBe(200);
    expect((await call('GET', `${spare}/webhook/deliveries?limit=0`, { token: id })).status).toBe(400);
    expect((await call('DELETE', spare, { token: id })).status).toBe(200);
    expect((await call('DELETE', spare, { token: id })).status).toBe(404);
    expect((await call('GET', '/account/usage?group_by=model', { token: id })).status).toBe(200);
    expect((await call('GET', '/account/usage?group_by=week', { token: id })).status).toBe(400);
    expect((await call('GET', '/account/ledger-entries?first=2', { token: id })).status).toBe(200);
    expect((await call('GET', '/account/ledger-entries?first=0', { token: id })).status).toBe(400);
    expect((await call('GET', `/account/requests?first=5&keyId=${key.id}`, { token: id })).status).toBe(200);
    expect((await call('GET', '/account/requests?first=0', { token: id })).status).toBe(400);
    expect((await call('GET', '/account/requests/export?format=jsonl', { token: id })).status).toBe(200);
    expect((await call('GET', '/account/requests/export?format=xml', { token: id })).status).toBe(400);
    const bought = await call('POST', '/account/checkout', { token: id, json: { credits: 500 } });
    expect(bought.status).toBe(200);
    expect((await call('POST', '/account/checkout', { token: id, json: { credits: 0 } })).status).toBe(400);
    expect((await call('GET', '/account/purchases?first=1', { token: id })).status).toBe(200);
    expect((await call('GET', '/account/purchases?after=nope', { token: id })).status).toBe(400);
    const paid = stripe.sign(stripe.complete(bought.json().id as string));
    const hook = { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': paid.header };
    expect((await call('POST', '/webhooks/stripe', { body: paid.payload, headers: hook })).status).toBe(200);
    expect((await call('POST', '/webhooks/stripe', { body: paid.payload.replace('500', '900'), headers: hook })).status).toBe(400);

    const admin = ADMIN_TOKEN;
    expect((await call('POST', `/admin/accounts/${acct.id}/credits`, { token: admin, json: { credits: 1, reason: 'openapi' } })).status).toBe(200);
    expect((await call('POST', '/admin/accounts/acct_missing/credits', { token: admin, json: { credits: 1, reason: 'openapi' } })).status).toBe(404);
    expect((await call('PATCH', `/admin/accounts/${acct.id}`, { token: admin, json: { member: true } })).status).toBe(200);
    expect((await call('PATCH', `/admin/accounts/${acct.id}`, { token: admin, json: { member: 'yes' } })).status).toBe(400);
    expect((await call('GET', `/admin/webhook-deliveries?keyId=${key.id}`, { token: admin })).status).toBe(200);
    expect((await call('GET', `/admin/webhook-deliveries?keyid=${key.id}`, { token: admin })).status).toBe(400);
    expect((await call('GET', '/admin/upstreams', { token: admin })).status).toBe(200);
    expect((await call('GET', '/admin/upstreams', { token: 'wrong-admin-token-0123' })).status).toBe(401);
    expect((await call('POST', '/admin/catalog/reload', { token: admin })).status).toBe(200);
    expect((await call('POST', '/admin/catalog/reload')).status).toBe(401);
    expect((await call('GET', '/admin/audit?first=2', { token: admin })).status).toBe(200);
    expect((await call('GET', '/admin/audit?first=0', { token: admin })).status).toBe(400);
    expect((await call('GET', '/admin/audit', { token: id })).status).toBe(403);
  });

  test('health, metrics, the console, the development sign-in page and GraphQL', async () => {
    const twice = '?a=1&a=2';
    for (const path of [
      '/healthz',
      '/livez',
      '/readyz',
      '/metrics',
      '/',
      '/console',
      '/console/',
      '/console/config.json',
      '/console/keys',
      '/dev-idp/sign-in',
    ]) {
      expect([path, (await call('GET', path)).status]).toEqual([path, path === '/' ? 302 : path === '/console' ? 301 : 200]);
      expect([path, (await call('GET', path + twice)).status]).toEqual([path, 400]);
    }
    const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec((await call('GET', '/console/')).text)![1];
    expect((await call('GET', asset)).status).toBe(200);
    expect((await call('GET', '/console/assets/missing.js')).status).toBe(404);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect((await call('POST', '/dev-idp/sign-in', { body: 'username=ada', headers: form })).status).toBe(303);
    expect((await call('POST', '/dev-idp/sign-in', { body: 'username=', headers: form })).status).toBe(400);
    const query = `/graphql?query=${encodeURIComponent('{ models { id } }')}`;
    expect((await call('GET', query, { token: key.secret })).status).toBe(200);
    expect((await call('GET', query)).status).toBe(400);
    expect((await call('POST', '/graphql', { token: key.secret, json: { query: '{ models { id } }' } })).status).toBe(200);
    expect((await call('POST', '/graphql', { json: { query: '{ models { id } }' } })).status).toBe(401);
    expect((await call('OPTIONS', '/graphql')).status).toBe(204);
    expect((await call('OPTIONS', `/graphql${twice}`)).status).toBe(400);
  });

  test('every documented operation was answered with a success (when it has one) and with an error', () => {
    const missing = documentedOperations().flatMap((d) => {
      const statuses = [...(answered.get(d.id) ?? [])];
      return [
        ...(d.succeeds && !statuses.some((s) => s < 400) ? [`${d.id}: no success`] : []),
        ...(!statuses.some((s) => s >= 400) ? [`${d.id}: no error`] : []),
      ];
    });
    expect(missing).toEqual([]);
  });
});
