/**
 * A URL a client hands in is stored as sent or refused: the URL parser dropped tabs and line
 * breaks and trimmed the ends, so `https://example.com/x\r\nX-Injected: 1` was stored as
 * `https://example.com/xX-Injected:%201`. Control characters, whitespace and port 0 are a 400
 * with `param` naming the field (webhook `url`, video `image_url`), nothing stored or charged.
 * `regenerateSecret: false` names `regenerateSecret`.
 */
import { useTestGateway } from '../support/use-test-gateway';

const gw = useTestGateway();

const BAD = [
  'https://example.com/x\r\nX-Injected: 1',
  'https://exa\tmple.com/x',
  'https://example.com/a b',
  'https://example.com:0/x',
  'https://example.com/x\u0000',
];

test('webhook PATCH: each is a 400 naming url, and the stored webhook is unchanged', async () => {
  const acct = await gw.newAccount(0);
  const key = await gw.newKey(acct);
  const patch = (body: object) => gw.api('PATCH', `/account/api-keys/${key.id}/webhook`, { token: acct.idToken, body });
  const good = await patch({ url: 'https://example.com/hook' });
  expect(good.status).toBe(200);
  for (const url of BAD) {
    const res = await patch({ url });
    expect([url, res.status, res.body.error?.type, res.body.error?.param]).toEqual([url, 400, 'invalid_request_error', 'url']);
  }
  const stored = await gw.api('GET', '/account/api-keys', { token: acct.idToken });
  expect(stored.body.data[0].webhook).toEqual({ url: 'https://example.com/hook' });

  const notTrue = await patch({ regenerateSecret: false });
  expect(notTrue.status).toBe(400);
  expect(notTrue.body.error).toMatchObject({ type: 'invalid_request_error', param: 'regenerateSecret' });
});

test('video image_url: the same refusals name image_url, and nothing is charged', async () => {
  const acct = await gw.newAccount(100);
  const key = await gw.newKey(acct);
  for (const image_url of BAD) {
    const res = await gw.api('POST', '/v1/video/queue', { token: key.secret, body: { model: 'svc-2.5-preview-image-to-video', image_url } });
    expect([image_url, res.status, res.body.error?.param]).toEqual([image_url, 400, 'image_url']);
  }
  expect(await gw.balance(acct)).toBe(100);
});
