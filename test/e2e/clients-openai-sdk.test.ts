/**
 * The official `openai` SDK, used the way agents use it, against the gateway routed to a fake
 * OpenAI upstream that validates like OpenAI: tool loops (plain and streamed), structured
 * outputs with zod, vision parts, logprobs, several choices, every forwarded option, and the
 * Responses API. Each test checks what the client got, what the upstream received, and the charge.
 */
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { PLAIN_CALL_CREDITS, useAgentRig, UPSTREAM_CHAT_MODEL, UPSTREAM_SECRET, weatherParameters } from '../support/agent-gateway';
import { FAKE_AGENT_USAGE } from '../support/fake-openai-chat';

const rig = useAgentRig(10);
beforeEach(() => {
  rig.upstream.setMode('ok');
  rig.upstream.requests.length = 0;
});

const client = (retries = 0) => new OpenAI({ apiKey: rig.live.secret, baseURL: `${rig.gw.url}/v1`, maxRetries: retries });
const tools = [{ type: 'function' as const, function: { name: 'get_weather', description: 'Weather in a city', parameters: weatherParameters, strict: true } }];

test('a full tool loop: call, tool result, final answer; the upstream sees tools and tool turns as sent', async () => {
  const openai = client();
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
  const first = await openai.chat.completions.create({ model: 'svc-chat-1', messages, tools, tool_choice: 'auto', parallel_tool_calls: false });
  expect(first.choices[0].finish_reason).toBe('tool_calls');
  const call = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
  expect(call.function.name).toBe('get_weather');
  expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris', unit: 'celsius' });
  expect(first.usage).toMatchObject({
    prompt_tokens: 40,
    completion_tokens: 12,
    prompt_tokens_details: { cached_tokens: 8 },
    completion_tokens_details: { reasoning_tokens: 4 },
  });

  messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '{"temp":21}' });
  const second = await openai.chat.completions.create({ model: 'svc-chat-1', messages, tools });
  expect(second.choices[0].message.content).toBe('Tool said: {"temp":21}');
  expect(second.choices[0].finish_reason).toBe('stop');

  const [sent1, sent2] = rig.chatRequests();
  expect(sent1).toMatchObject({ model: UPSTREAM_CHAT_MODEL, tools, tool_choice: 'auto', parallel_tool_calls: false });
  expect(sent2.messages[1]).toMatchObject({
    role: 'assistant',
    tool_calls: [{ id: call.id, type: 'function', function: { name: 'get_weather', arguments: call.function.arguments } }],
  });
  expect(sent2.messages[2]).toEqual({ role: 'tool', tool_call_id: call.id, content: '{"temp":21}' });
  await rig.expectCharged(2);
});

test("the turns LangChain and the Agents SDK send back are taken: a tool message's name, an assistant text part carrying the returned message's fields", async () => {
  const openai = client();
  const first = await openai.chat.completions.create({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools });
  const call = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
  const messages = [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: null, tool_calls: [call] },
    // LangChain's ToolMessage, as @langchain/openai writes it.
    { role: 'tool', content: '{"temp":21}', name: 'get_weather', tool_call_id: call.id },
    // The Agents SDK's second turn over chat completions.
    { role: 'assistant', content: [{ type: 'text', text: 'It is 21.', role: 'assistant', refusal: null, annotations: [] }] },
    { role: 'user', content: 'And Rome?' },
  ] as unknown as OpenAI.ChatCompletionMessageParam[];
  const second = await openai.chat.completions.create({ model: 'svc-chat-1', messages, tools });
  expect(second.choices[0].message).toBeDefined();
  const sent = rig.chatRequests()[1];
  expect(sent.messages[2]).toEqual({ role: 'tool', tool_call_id: call.id, content: '{"temp":21}' });
  expect(sent.messages[3].content).toEqual([{ type: 'text', text: 'It is 21.' }]);
  await rig.expectCharged(2);
});

test('a tool whose description is null is taken, as OpenAI takes it', async () => {
  const nullDescription = [{ ...tools[0], function: { ...tools[0].function, description: null } }] as unknown as typeof tools;
  const res = await client().chat.completions.create({
    model: 'svc-chat-1',
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
    tools: nullDescription,
  });
  expect(res.choices[0].finish_reason).toBe('tool_calls');
  await rig.expectCharged(1);
});

test('every response carries an x-request-id the SDK reports, errors included', async () => {
  const { data, request_id } = await client()
    .chat.completions.create({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools })
    .withResponse();
  expect(data.object).toBe('chat.completion');
  expect(request_id).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
  const err = await client()
    .chat.completions.create({ model: 'svc-chat-1', messages: [] })
    .catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
  expect(err).toBeInstanceOf(OpenAI.BadRequestError);
  expect((err as InstanceType<typeof OpenAI.APIError>).requestID).toMatch(/^req_/);
  expect((err as InstanceType<typeof OpenAI.APIError>).requestID).not.toBe(request_id);
  await rig.expectCharged(1);
});

test('streamed tool calls through chat.completions.stream() and finalChatCompletion()', async () => {
  const stream = client().chat.completions.stream({
    model: 'svc-chat-1',
    messages: [{ role: 'user', content: 'Weather?' }],
    tools,
    stream_options: { include_usage: true },
  });
  const argumentDeltas: string[] = [];
  stream.on('tool_calls.function.arguments.delta', (e) => argumentDeltas.push(e.arguments_delta));
  const final = await stream.finalChatCompletion();
  const call = final.choices[0].message.tool_calls![0];
  expect(call.function.name).toBe('get_weather');
  expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris', unit: 'celsius' });
  expect(argumentDeltas.length).toBeGreaterThanOrEqual(2);
  expect(final.choices[0].finish_reason).toBe('tool_calls');
  expect(final.usage?.total_tokens).toBe(FAKE_AGENT_USAGE.total_tokens);
  expect(rig.chatRequests()[0]).toMatchObject({ stream: true, tools });
  await rig.expectCharged(1);
});

test('chat.completions.parse with a zod schema gets a parsed object; response_format reaches the upstream', async () => {
  const Weather = z.object({ city: z.string(), degrees: z.number(), sunny: z.boolean() });
  const completion = await client().chat.completions.parse({
    model: 'svc-chat-1',
    messages: [{ role: 'user', content: 'Paris weather as JSON' }],
    response_format: zodResponseFormat(Weather, 'weather'),
  });
  expect(completion.choices[0].message.parsed).toEqual({ city: 'Paris', degrees: 21, sunny: true });
  expect(rig.chatRequests()[0].response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'weather', strict: true } });
  await rig.expectCharged(1);
});

test('an image part reaches a vision model as sent; logprobs, n and every option are forwarded as sent', async () => {
  const image = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const completion = await client().chat.completions.create({
    model: 'svc-chat-1',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: image, detail: 'low' } },
        ],
      },
    ],
    logprobs: true,
    top_logprobs: 2,
    n: 2,
    max_completion_tokens: 100,
    frequency_penalty: 0.5,
    presence_penalty: -0.5,
    logit_bias: { '50256': -100 },
    user: 'end-user-1',
    metadata: { team: 'a' },
    reasoning_effort: 'low',
    prompt_cache_retention: '24h',
    seed: 3,
    stop: ['END'],
    temperature: 0.2,
  });
  expect(completion.choices).toHaveLength(2);
  expect(completion.choices.map((c) => c.message.content)).toEqual(['Answer 0', 'Answer 1']);
  expect(completion.choices[0].logprobs?.content?.[0]).toMatchObject({ token: 'Answ', logprob: -0.25 });
  const sent = rig.chatRequests()[0];
  expect(sent.messages[0].content[1]).toEqual({ type: 'image_url', image_url: { url: image, detail: 'low' } });
  expect(sent).toMatchObject({
    n: 2,
    logprobs: true,
    top_logprobs: 2,
    max_completion_tokens: 100,
    frequency_penalty: 0.5,
    presence_penalty: -0.5,
    logit_bias: { '50256': -100 },
    user: 'end-user-1',
    metadata: { team: 'a' },
    reasoning_effort: 'low',
    prompt_cache_retention: '24h',
    seed: 3,
    stop: ['END'],
    temperature: 0.2,
  });
  expect(sent.max_tokens).toBeUndefined();
  await rig.expectCharged(1);
});

test.each([
  [
    'an audio part to a model without audio input',
    {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hi' },
            { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
          ],
        },
      ],
    },
    'messages[0].content[1]',
  ],
  ['an unknown content part', { messages: [{ role: 'user', content: [{ type: 'video_url', video_url: 'x' }] }] }, 'messages[0].content[0]'],
  ['an unknown field', { messages: [{ role: 'user', content: 'hi' }], frobnicate: 1 }, 'frobnicate'],
  ['n as a string', { messages: [{ role: 'user', content: 'hi' }], n: '2' }, 'n'],
  [
    'a tool_choice naming no declared tool',
    { messages: [{ role: 'user', content: 'hi' }], tools, tool_choice: { type: 'function', function: { name: 'nope' } } },
    'tool_choice',
  ],
  [
    'a tool message answering no call',
    {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'tool', tool_call_id: 'call_x', content: '1' },
      ],
    },
    'messages[1].tool_call_id',
  ],
  ['deprecated functions', { messages: [{ role: 'user', content: 'hi' }], functions: [{ name: 'f' }] }, 'functions'],
  // What OpenAI itself refuses (so no SDK sends it):
  ['an empty array of content parts', { messages: [{ role: 'user', content: [] }] }, 'messages[0].content'],
  ['an empty tools array', { messages: [{ role: 'user', content: 'hi' }], tools: [] }, 'tools'],
  ['a tool_choice without tools', { messages: [{ role: 'user', content: 'hi' }], tool_choice: 'auto' }, 'tool_choice'],
  [
    '17 metadata pairs',
    { messages: [{ role: 'user', content: 'hi' }], metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) },
    'metadata',
  ],
  ['max_tokens and max_completion_tokens together', { messages: [{ role: 'user', content: 'hi' }], max_tokens: 5, max_completion_tokens: 6 }, 'max_tokens'],
  ['5 stop sequences', { messages: [{ role: 'user', content: 'hi' }], stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
  ['n far past its range', { messages: [{ role: 'user', content: 'hi' }], n: 2 ** 64 }, 'n'],
  ['audio output asked through modalities', { messages: [{ role: 'user', content: 'hi' }], modalities: ['text', 'audio'] }, 'modalities[1]'],
  ['stream_options without stream', { messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: true } }, 'stream_options'],
  ['two tools of one name', { messages: [{ role: 'user', content: 'hi' }], tools: [...tools, ...tools] }, 'tools[1].function.name'],
  [
    'an image data URL whose payload is not base64',
    { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,!!!!' } }] }] },
    'messages[0].content[0].image_url.url',
  ],
])('%s is a 400 naming the field; nothing is charged and the upstream is not called', async (_name, body, param) => {
  const res = await rig.gw.api('POST', '/v1/chat/completions', { token: rig.live.secret, body: { model: 'svc-chat-1', ...body } });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
  expect(rig.chatRequests()).toHaveLength(0);
  await rig.expectCharged(0);
});

// Not built (README): said so by name, not "Invalid input".
test.each([
  [
    'an allowed_tools tool choice',
    { tools, tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } } },
    'tool_choice',
    /allowed_tools .*not supported/,
  ],
  ['a custom tool', { tools: [{ type: 'custom', custom: { name: 'x' } }] }, 'tools[0].type', /custom.*not/],
])('%s is a 400 naming the field that says it is not supported; nothing is charged', async (_name, body, param, message) => {
  const res = await rig.gw.api('POST', '/v1/chat/completions', {
    token: rig.live.secret,
    body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], ...body },
  });
  expect([res.status, res.body.error.param]).toEqual([400, param]);
  expect(res.body.error.message).toMatch(message);
  expect(rig.chatRequests()).toHaveLength(0);
  await rig.expectCharged(0);
});

test('null on an optional field means "not given", as OpenAI reads it (openai-python sends None as null): taken, and not sent upstream', async () => {
  const nulls = {
    user: null,
    tools: null,
    tool_choice: null,
    parallel_tool_calls: null,
    response_format: null,
    prompt_cache_key: null,
    safety_identifier: null,
  };
  const chat = await rig.gw.api('POST', '/v1/chat/completions', {
    token: rig.live.secret,
    body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], ...nulls },
  });
  expect(chat.status).toBe(200);
  const sent = rig.chatRequests()[0];
  for (const field of Object.keys(nulls)) expect([field, field in sent]).toEqual([field, false]);
  const responses = await rig.gw.api('POST', '/v1/responses', {
    token: rig.live.secret,
    body: {
      model: 'svc-chat-1',
      input: 'hi',
      user: null,
      tools: null,
      tool_choice: null,
      text: null,
      safety_identifier: null,
      prompt_cache_key: null,
      store: false,
    },
  });
  expect(responses.status).toBe(200);
  expect(rig.chatRequests()[1]).not.toHaveProperty('tools');
  await rig.expectCharged(2, PLAIN_CALL_CREDITS);
});

test('an upstream 400 reaches the client as a readable 400 without the upstream names, called once, charged nothing', async () => {
  rig.upstream.setMode('bad-request');
  const err = await client(2)
    .chat.completions.create({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }] })
    .catch((e) => e);
  expect(err).toBeInstanceOf(OpenAI.BadRequestError);
  // The provider's own code, when it is a plain token, reaches the client as it was sent.
  expect(err.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json_schema', param: 'response_format' });
  expect(err.message).toContain('Invalid schema for model svc-chat-1');
  for (const secret of [UPSTREAM_CHAT_MODEL, UPSTREAM_SECRET, rig.upstream.url, '127.0.0.1']) expect(err.message).not.toContain(secret);
  expect(rig.upstream.requests).toHaveLength(1);

  // Streamed, the refusal arrives before the first byte: the same 400, not an event in a 200.
  const streamed = await client(2)
    .chat.completions.create({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], stream: true })
    .catch((e) => e);
  expect(streamed).toBeInstanceOf(OpenAI.BadRequestError);
  const viaResponses = await client(2)
    .responses.create({ model: 'svc-chat-1', input: 'hi', max_output_tokens: 20 })
    .catch((e) => e);
  expect(viaResponses).toBeInstanceOf(OpenAI.BadRequestError);
  expect(viaResponses.error.param).toBe('text.format');
  expect(rig.upstream.requests).toHaveLength(3);
  await rig.expectCharged(0);
});

describe('the Responses API', () => {
  const responseTools = [{ type: 'function' as const, name: 'get_weather', description: 'Weather in a city', parameters: weatherParameters, strict: true }];

  test('reasoning settings as agent SDKs send them (effort and summary) are taken; the effort is forwarded', async () => {
    const res = await client().responses.create({
      model: 'svc-chat-1',
      input: 'Weather in Paris?',
      tools: responseTools,
      reasoning: { effort: 'low', summary: 'auto' },
      prompt_cache_retention: '24h',
    });
    expect(res.status).toBe('completed');
    expect(rig.chatRequests()[0]).toMatchObject({ reasoning_effort: 'low', prompt_cache_retention: '24h' });
    expect(rig.chatRequests()[0].reasoning).toBeUndefined();
    await rig.expectCharged(1);
  });

  test('responses.create with tools, then the call output through previous_response_id', async () => {
    const openai = client();
    const first = await openai.responses.create({ model: 'svc-chat-1', instructions: 'Be brief.', input: 'Weather in Paris?', tools: responseTools });
    expect(first.status).toBe('completed');
    const call = first.output.find((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ name: 'get_weather', status: 'completed' });
    expect(JSON.parse(call.arguments)).toEqual({ city: 'Paris', unit: 'celsius' });
    expect(first.usage).toMatchObject({ input_tokens: 40, output_tokens: 12, total_tokens: 52, input_tokens_details: { cached_tokens: 8 } });

    const second = await openai.responses.create({
      model: 'svc-chat-1',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temp":21}' }],
      tools: responseTools,
    });
    expect(second.output_text).toBe('Tool said: {"temp":21}');
    const [sent1, sent2] = rig.chatRequests();
    expect(sent1.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris?' },
    ]);
    expect(sent1.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: weatherParameters, strict: true } },
    ]);
    expect(sent2.messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: call.call_id, type: 'function', function: { name: 'get_weather', arguments: call.arguments } }] },
      { role: 'tool', tool_call_id: call.call_id, content: '{"temp":21}' },
    ]);
    expect((await openai.responses.retrieve(second.id)).output_text).toBe('Tool said: {"temp":21}');
    await rig.expectCharged(2);
  });

  test("a call's output as parts: its text parts reach the upstream as the tool message's parts; an image in it is a 400 naming it, nothing charged", async () => {
    const openai = client();
    const call = { type: 'function_call' as const, call_id: 'call_parts', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' };
    const parts: OpenAI.Responses.ResponseInputItem.FunctionCallOutput['output'] = [
      { type: 'input_text', text: 'Sunny, ' },
      { type: 'input_text', text: '21 degrees' },
    ];
    const res = await openai.responses.create({
      model: 'svc-chat-1',
      input: [{ role: 'user', content: 'Weather in Paris?' }, call, { type: 'function_call_output', call_id: 'call_parts', output: parts }],
      tools: responseTools,
      store: false,
    });
    expect(res.status).toBe('completed');
    expect(rig.chatRequests()[0].messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_parts',
      content: [
        { type: 'text', text: 'Sunny, ' },
        { type: 'text', text: '21 degrees' },
      ],
    });
    await rig.expectCharged(1);

    const withImage = [...parts, { type: 'input_image' as const, detail: 'auto' as const, image_url: 'data:image/png;base64,iVBORw0KGgo=' }];
    const err = await openai.responses
      .create({
        model: 'svc-chat-1',
        input: [{ role: 'user', content: 'Weather in Paris?' }, call, { type: 'function_call_output', call_id: 'call_parts', output: withImage }],
        tools: responseTools,
        store: false,
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({ type: 'invalid_request_error', param: 'input[2].output[2]' });
    expect(rig.chatRequests()).toHaveLength(1);
    await rig.expectCharged(0);
  });

  test('what agent SDKs send back with store: false is taken: a reasoning item (not forwarded: chat has no place for it) and include reasoning.encrypted_content', async () => {
    const res = await client().responses.create({
      model: 'svc-chat-1',
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAAB…' },
        { role: 'assistant', content: 'Let me think.' },
        { role: 'user', content: 'And now?' },
      ],
      include: ['reasoning.encrypted_content'],
      store: false,
    });
    expect(res.status).toBe('completed');
    expect(rig.chatRequests()[0].messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: 'Let me think.' },
      { role: 'user', content: 'And now?' },
    ]);
    await rig.expectCharged(1, PLAIN_CALL_CREDITS);
  });

  test('an allowed_tools tool choice is a 400 that says it is not supported, nothing charged', async () => {
    const err = await client()
      .responses.create({
        model: 'svc-chat-1',
        input: 'hi',
        tools: responseTools,
        tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [] },
        store: false,
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({ param: 'tool_choice', message: expect.stringMatching(/allowed_tools .*not supported/) });
    await rig.expectCharged(0);
  });

  test('responses.stream with tools emits the Responses event sequence and a final response with usage', async () => {
    const stream = client().responses.stream({ model: 'svc-chat-1', input: 'Weather?', tools: responseTools, store: false });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.output_item.added');
    expect(types).toContain('response.function_call_arguments.delta');
    expect(types).toContain('response.function_call_arguments.done');
    expect(types.at(-1)).toBe('response.completed');
    const call = final.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(JSON.parse(call.arguments)).toEqual({ city: 'Paris', unit: 'celsius' });
    expect(final.usage?.total_tokens).toBe(52);
    await rig.expectCharged(1);
  });

  test('text.format json_schema is parsed by responses.parse; a streamed text answer arrives as output_text deltas', async () => {
    const openai = client();
    const { zodTextFormat } = await import('openai/helpers/zod');
    const parsed = await openai.responses.parse({
      model: 'svc-chat-1',
      input: 'Paris as JSON',
      text: { format: zodTextFormat(z.object({ city: z.string(), degrees: z.number() }), 'weather') },
    });
    expect(parsed.output_parsed).toEqual({ city: 'Paris', degrees: 21 });
    expect(rig.chatRequests()[0].response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'weather' } });

    const deltas: string[] = [];
    const stream = openai.responses.stream({
      model: 'svc-chat-1',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
      max_output_tokens: 50,
    });
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(deltas.join('')).toBe('Answer 0');
    expect(final.output_text).toBe('Answer 0');
    expect(rig.chatRequests()[1].max_completion_tokens).toBe(50);
    await rig.expectCharged(2);
  });

  test('metadata is held to what chat takes (16 pairs): a 400 naming it, nothing stored or charged', async () => {
    const res = await rig.gw.api('POST', '/v1/responses', {
      token: rig.live.secret,
      body: { model: 'svc-chat-1', input: 'hi', metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'metadata' });
    expect(rig.chatRequests()).toHaveLength(0);
    await rig.expectCharged(0);
  });

  test('another account cannot read or continue a stored response', async () => {
    const first = await client().responses.create({ model: 'svc-chat-1', input: 'hi', tools: responseTools });
    const other = await rig.gw.newAccount(1);
    const otherKey = await rig.gw.newKey(other);
    const read = await rig.gw.api('GET', `/v1/responses/${first.id}`, { token: otherKey.secret });
    expect(read.status).toBe(404);
    const cont = await rig.gw.api('POST', '/v1/responses', {
      token: otherKey.secret,
      body: { model: 'svc-chat-1', input: 'again', previous_response_id: first.id },
    });
    expect(cont.status).toBe(404);
    expect(cont.body.error.param).toBe('previous_response_id');
    await rig.expectCharged(1);
  });
});
