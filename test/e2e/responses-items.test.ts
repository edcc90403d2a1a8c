/**
 * The rest of the Responses API the `openai` SDK reaches: `responses.inputItems.list` (the
 * conversation a stored response was generated from, paged), `responses.cancel` (refused: no
 * response here runs in the background) and `responses.inputTokens.count` (free). Against the
 * gateway's simulator, with a live key whose balance must not move for the two free calls.
 */
import OpenAI from 'openai';
import type { TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';

const gw = useTestGateway();
let account: TestAccount;
let openai: OpenAI;
beforeAll(async () => {
  account = await gw.newAccount(100);
  const key = await gw.newKey(account);
  openai = new OpenAI({ apiKey: key.secret, baseURL: `${gw.url}/v1`, maxRetries: 0 });
});

const MODEL = 'svc-chat-1';

async function twoTurns() {
  const first = await openai.responses.create({ model: MODEL, instructions: 'Be brief.', input: 'Name a colour.', max_output_tokens: 20 });
  const second = await openai.responses.create({
    model: MODEL,
    previous_response_id: first.id,
    input: [{ role: 'user', content: [{ type: 'input_text', text: 'And another one?' }] }],
    max_output_tokens: 20,
  });
  return { first, second };
}

test('input items: the conversation before the answer, newest first, every item with an id that stays the same', async () => {
  const { first, second } = await twoTurns();
  const page = await openai.responses.inputItems.list(second.id);
  const items = page.data as Array<{ id: string; type: string; role?: string; content?: Array<{ type: string; text?: string }> }>;
  // Newest first: this turn's question, the first answer, the first question.
  expect(items.map((i) => [i.type, i.role])).toEqual([
    ['message', 'user'],
    ['message', 'assistant'],
    ['message', 'user'],
  ]);
  expect(items[0].content).toEqual([{ type: 'input_text', text: 'And another one?' }]);
  expect(items[1].id).toBe(first.output[0].id);
  expect(items[1].content![0]).toMatchObject({ type: 'output_text', text: first.output_text });
  expect(items[2].content).toEqual([{ type: 'input_text', text: 'Name a colour.' }]);
  expect(new Set(items.map((i) => i.id)).size).toBe(3);
  for (const item of items) expect(item.id).toMatch(/^msg_[0-9a-f]+$/);

  // The first response lists its question under the same id; asking again gives the same ids.
  const firstItems = (await openai.responses.inputItems.list(first.id)).data;
  expect(firstItems.map((i) => i.id)).toEqual([items[2].id]);
  expect((await openai.responses.inputItems.list(second.id)).data.map((i) => i.id)).toEqual(items.map((i) => i.id));

  // Oldest first, and paged one at a time by the SDK's own iteration (has_more / after).
  const asc = await openai.responses.inputItems.list(second.id, { order: 'asc' });
  expect(asc.data.map((i) => i.id)).toEqual([...items].reverse().map((i) => i.id));
  const oneByOne: string[] = [];
  for await (const item of openai.responses.inputItems.list(second.id, { limit: 1 })) oneByOne.push(item.id);
  expect(oneByOne).toEqual(items.map((i) => i.id));
  const firstPage = await gw.api('GET', `/v1/responses/${second.id}/input_items?limit=2`, { token: openai.apiKey as string });
  expect(firstPage.body).toMatchObject({ object: 'list', first_id: items[0].id, last_id: items[1].id, has_more: true });
});

test('input items: unknown or foreign responses are 404s; a bad limit, order or cursor is a 400 naming it', async () => {
  const { second } = await twoTurns();
  const token = openai.apiKey as string;
  const other = await gw.newKey(await gw.newAccount(10));
  const foreign = await gw.api('GET', `/v1/responses/${second.id}/input_items`, { token: other.secret });
  expect(foreign.status).toBe(404);
  expect(foreign.body.error).toMatchObject({ type: 'not_found_error', param: 'response_id' });
  for (const id of ['resp_missing', 'resp_%00', '%ED%A0%80']) {
    const res = await gw.api('GET', `/v1/responses/${id}/input_items`, { token });
    expect([400, 404]).toContain(res.status);
  }
  const cases: Array<[string, string]> = [
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=two', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=0x10', 'limit'],
    ['limit=1e1', 'limit'],
    ['limit=%205', 'limit'],
    ['limit=5.0', 'limit'],
    ['order=sideways', 'order'],
    ['after=msg_nothere', 'after'],
    ['surprise=1', 'surprise'],
    ['include=foo', 'include[0]'],
    ['include[]=message.input_image.image_url&include[]=foo', 'include[][1]'],
  ];
  for (const [query, param] of cases) {
    const res = await gw.api('GET', `/v1/responses/${second.id}/input_items?${query}`, { token });
    expect([res.status, res.body.error?.param]).toEqual([400, param]);
    expect(res.body.error.type).toBe('invalid_request_error');
  }
  // OpenAI's own values are taken, one or several, as the SDK sends them.
  const included = await openai.responses.inputItems.list(second.id, { include: ['message.input_image.image_url', 'message.output_text.logprobs'] });
  expect(included.data.length).toBeGreaterThan(0);
  expect((await openai.responses.retrieve(second.id, { include: ['message.input_image.image_url', 'message.output_text.logprobs'] })).id).toBe(second.id);
  // An unknown value is named with what is allowed; retrieve reads its query as strictly.
  const wrongInclude = await gw.api('GET', `/v1/responses/${second.id}/input_items?include=foo`, { token });
  expect(wrongInclude.body.error.message).toMatch(/^Invalid 'include\[0\]': must be one of file_search_call\.results/);
  for (const [query, param] of [
    ['include=foo', 'include[0]'],
    ['bogus=1', 'bogus'],
    ['stream=true', 'stream'],
  ]) {
    const res = await gw.api('GET', `/v1/responses/${second.id}?${query}`, { token });
    expect([query, res.status, res.body.error?.param]).toEqual([query, 400, param]);
  }
  // A list of another kind is still given once.
  expect((await gw.api('GET', `/v1/responses/${second.id}/input_items?limit=1&limit=2`, { token })).body.error.param).toBe('limit');
});

test('cancel: a completed response cannot be cancelled (400), an unknown one is a 404', async () => {
  const { first } = await twoTurns();
  const refused = await openai.responses.cancel(first.id).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
  expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('response_id');
  const missing = await openai.responses.cancel('resp_missing').catch((e: unknown) => e);
  expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
  // Still there, unchanged.
  expect((await openai.responses.retrieve(first.id)).status).toBe(first.status);
});

test('input tokens: counted as the call would count its prompt, conversation included, and free', async () => {
  const before = await gw.balance(account);
  const count = (body: Omit<OpenAI.Responses.InputTokenCountParams, 'model'>) => openai.responses.inputTokens.count({ model: MODEL, ...body });
  const short = await count({ input: 'hello' });
  expect(short.object).toBe('response.input_tokens');
  expect(short.input_tokens).toBeGreaterThan(0);
  const long = await count({ input: 'hello '.repeat(200) });
  expect(long.input_tokens).toBeGreaterThan(short.input_tokens + 150);
  const withTools = await count({
    input: 'hello',
    tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }],
  });
  expect(withTools.input_tokens).toBeGreaterThan(short.input_tokens);
  expect(await gw.balance(account)).toBe(before);

  // With a previous response, its conversation counts too.
  const { second } = await twoTurns();
  const afterTurns = await gw.balance(account);
  const continued = await count({ input: 'hello', previous_response_id: second.id });
  expect(continued.input_tokens).toBeGreaterThan(short.input_tokens);
  expect(await gw.balance(account)).toBe(afterTurns);

  // Refusals name the field, as a call's do.
  const noModel = await gw.api('POST', '/v1/responses/input_tokens', { token: openai.apiKey as string, body: { input: 'hi' } });
  expect([noModel.status, noModel.body.error.param]).toEqual([400, 'model']);
  const badTool = await gw.api('POST', '/v1/responses/input_tokens', {
    token: openai.apiKey as string,
    body: { model: MODEL, input: 'hi', tools: [{ type: 'web_search' }] },
  });
  expect(badTool.status).toBe(400);
  expect(badTool.body.error.param).toMatch(/^tools/);
  const unknownPrevious = await gw.api('POST', '/v1/responses/input_tokens', {
    token: openai.apiKey as string,
    body: { model: MODEL, input: 'hi', previous_response_id: 'resp_gone' },
  });
  expect([unknownPrevious.status, unknownPrevious.body.error.param]).toEqual([404, 'previous_response_id']);
});

test('a conversation is bounded: one stored item referenced twice, or previous turns and input past 25 MB, is a 400 naming where', async () => {
  const token = (await gw.newKey(account, { mode: 'test' })).secret;
  const post = (body: object) => gw.api('POST', '/v1/responses', { token, body: { model: MODEL, max_output_tokens: 16, ...body } });
  const first = await post({ input: 'Name a colour.' });
  expect(first.status).toBe(200);
  const itemId = first.body.output[0].id as string;
  const twice = await post({
    input: [
      { type: 'item_reference', id: itemId },
      { type: 'item_reference', id: itemId },
    ],
  });
  expect(twice.status).toBe(400);
  expect(twice.body.error).toMatchObject({ type: 'invalid_request_error', param: 'input[1].id' });
  expect(
    (
      await post({
        input: [
          { type: 'item_reference', id: itemId },
          { role: 'user', content: 'and again?' },
        ],
      })
    ).status,
  ).toBe(200);

  // Two turns of 13 MB: each request fits a body, the conversation does not.
  const big = Array.from({ length: 20 }, () => ({ role: 'user', content: 'word '.repeat(140_000) }));
  const large = await post({ input: big });
  expect(large.status).toBe(200);
  const next = await post({ input: big, previous_response_id: large.body.id });
  expect(next.status).toBe(400);
  expect(next.body.error).toMatchObject({ type: 'invalid_request_error', code: 'context_length_exceeded', param: 'previous_response_id' });
}, 60_000);
