/**
 * An image part's web address passes the check every caller URL passes (video image_url,
 * webhooks): the model provider fetches it, and one in the operator's own network would fetch a
 * loopback, private or metadata address for the caller. Refused with a 400 naming the part's
 * URL, before any hold or upstream call, in chat (plain and streamed) and the Responses API.
 */
import { useAgentRig } from '../support/agent-gateway';

const rig = useAgentRig(10);
beforeEach(() => {
  rig.upstream.setMode('ok');
  rig.upstream.requests.length = 0;
});

const FORBIDDEN = [
  'http://169.254.169.254/latest/meta-data/',
  'http://127.0.0.1:8080/healthz',
  'http://10.1.2.3/cat.png',
  'https://192.168.0.10/cat.png',
  'http://[::1]/cat.png',
  'http://[::ffff:169.254.169.254]/',
  'http://2130706433/cat.png',
  'http://localhost/cat.png',
  'http://printer.localhost/cat.png',
  'https://user:pw@93.184.216.34/cat.png',
  'ftp://93.184.216.34/cat.png',
  // A slash to the check's parser, user info to an RFC 3986 one: the host would be 127.0.0.1 there.
  'https://example.com\\@127.0.0.1/cat.png',
];

const withImage = (url: string, stream = false) => ({
  model: 'svc-chat-1',
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url } },
      ],
    },
  ],
  ...(stream ? { stream: true } : {}),
});

test.each(FORBIDDEN)('chat with an image at %s is a 400 naming the URL; no upstream call, nothing charged', async (url) => {
  for (const stream of [false, true]) {
    const res = await rig.gw.api('POST', '/v1/chat/completions', { token: rig.live.secret, body: withImage(url, stream) });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'messages[0].content[1].image_url.url' });
  }
  expect(rig.chatRequests()).toHaveLength(0);
  await rig.expectCharged(0);
});

test('the Responses API names the input_image it refused', async () => {
  const res = await rig.gw.api('POST', '/v1/responses', {
    token: rig.live.secret,
    body: { model: 'svc-chat-1', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'http://169.254.169.254/latest/meta-data/' }] }] },
  });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'input[0].content[0].image_url' });
  // In the Responses request's own words: no chat field names in the message either.
  expect(res.body.error.message).toMatch(/^input\[0\]\.content\[0\]\.image_url must not point/);
  for (const [body, param, word] of [
    [{ input: [] }, 'input', 'input'],
    [{ input: 'hi', max_output_tokens: 1e9 }, 'max_output_tokens', 'max_output_tokens'],
  ] as const) {
    const refused = await rig.gw.api('POST', '/v1/responses', { token: rig.live.secret, body: { model: 'svc-chat-1', ...body } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toBe(param);
    expect(refused.body.error.message).toContain(word);
    expect(refused.body.error.message).not.toMatch(/messages|max_completion_tokens/);
  }
  expect(rig.chatRequests()).toHaveLength(0);
  await rig.expectCharged(0);
});

test('a public address and a data URL reach the upstream (the address in its normal form), and are charged', async () => {
  const png = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const body = {
    model: 'svc-chat-1',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'https://93.184.216.34/A%20cat.png' } },
          { type: 'image_url', image_url: { url: png } },
        ],
      },
    ],
  };
  const res = await rig.gw.api('POST', '/v1/chat/completions', { token: rig.live.secret, body });
  expect(res.status).toBe(200);
  const sent = rig.chatRequests()[0];
  expect(sent.messages[0].content).toEqual([
    { type: 'image_url', image_url: { url: 'https://93.184.216.34/A%20cat.png' } },
    { type: 'image_url', image_url: { url: png } },
  ]);
  await rig.expectCharged(1);
});
