/**
 * The simulator as an agent-testing partner: with a test key the same agent loops run end to
 * end for free and deterministically, through chat completions (plain and streamed) and the
 * Responses API, with the openai SDK, the AI SDK and LangChain. Arguments and JSON are valid
 * against the schemas the clients send (the clients validate them), and tool results come back
 * in the final text.
 */
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { createOpenAI } from '@ai-sdk/openai';
import { generateObject, generateText, stepCountIs, tool } from 'ai';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { useAgentRig, weatherParameters } from '../support/agent-gateway';

// Registered before the rig's fixtures, so it reads the gateway before it closes.
afterAll(async () => {
  // Free: the account had nothing and still has nothing; the upstream never saw a request.
  expect(await rig.gw.balance(rig.test.account)).toBe(0);
  expect(rig.upstream.requests).toHaveLength(0);
});
const rig = useAgentRig(0);

const openai = () => new OpenAI({ apiKey: rig.test.secret, baseURL: `${rig.gw.url}/v1`, maxRetries: 0 });
const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: weatherParameters, strict: true } }];

async function chatToolLoop(stream: boolean) {
  const client = openai();
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Lyon?' }];
  const first = stream
    ? await client.chat.completions.stream({ model: 'svc-chat-1', messages, tools }).finalChatCompletion()
    : await client.chat.completions.create({ model: 'svc-chat-1', messages, tools });
  const call = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
  messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'sunny, 24 degrees' });
  const second = await client.chat.completions.create({ model: 'svc-chat-1', messages, tools });
  return { first, call, second };
}

test('a chat tool loop: a schema-valid call, then text that uses the result; the same every run, streamed or not', async () => {
  const a = await chatToolLoop(false);
  expect(a.first.choices[0].finish_reason).toBe('tool_calls');
  expect(a.call.function.name).toBe('get_weather');
  const args = JSON.parse(a.call.function.arguments);
  expect(Object.keys(args).sort()).toEqual(['city', 'unit']);
  expect(['celsius', 'fahrenheit']).toContain(args.unit);
  expect(a.second.choices[0].message.content).toContain('sunny, 24 degrees');
  expect(a.second.choices[0].finish_reason).toBe('stop');

  const b = await chatToolLoop(true);
  expect(b.call).toMatchObject(a.call);
  expect(b.second.choices[0].message.content).toBe(a.second.choices[0].message.content);
});

test('tool_choice: a named tool is called; none answers in text', async () => {
  const twoTools = [
    ...tools,
    { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] } } },
  ];
  const named = await openai().chat.completions.create({
    model: 'svc-chat-1',
    messages: [{ role: 'user', content: 'hi' }],
    tools: twoTools,
    tool_choice: { type: 'function', function: { name: 'get_time' } },
  });
  expect((named.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall).function.name).toBe('get_time');
  const none = await openai().chat.completions.create({
    model: 'svc-chat-1',
    messages: [{ role: 'user', content: 'hi' }],
    tools: twoTools,
    tool_choice: 'none',
  });
  expect(none.choices[0].message.tool_calls).toBeUndefined();
  expect(none.choices[0].message.content).toContain('hi');
});

test('structured outputs: json_schema (strict, nested, enums, arrays, nullable) parses with zod; json_object is an object', async () => {
  const Trip = z.object({
    destination: z.string(),
    days: z.number().int().min(2).max(14),
    budget: z.enum(['low', 'mid', 'high']),
    stops: z.array(z.object({ city: z.string(), nights: z.number().int() })).min(2),
    note: z.string().nullable(),
  });
  const parsed = await openai().chat.completions.parse({
    model: 'svc-chat-1',
    messages: [{ role: 'user', content: 'Plan a trip' }],
    response_format: zodResponseFormat(Trip, 'trip'),
  });
  const trip = parsed.choices[0].message.parsed!;
  expect(Trip.parse(trip)).toEqual(trip);
  expect(trip.stops.length).toBeGreaterThanOrEqual(2);

  const object = await openai().chat.completions.create({
    model: 'svc-chat-1',
    messages: [{ role: 'user', content: 'json please' }],
    response_format: { type: 'json_object' },
  });
  expect(typeof JSON.parse(object.choices[0].message.content!)).toBe('object');
});

test('n choices, logprobs and an image part with the simulator', async () => {
  const out = await openai().chat.completions.create({
    model: 'svc-chat-1',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Describe' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
        ],
      },
    ],
    n: 2,
    logprobs: true,
    top_logprobs: 2,
  });
  expect(out.choices).toHaveLength(2);
  expect(out.choices[0].message.content).toContain('I was shown 1 image');
  expect(out.choices[0].message.content).not.toBe(out.choices[1].message.content);
  expect(out.choices[0].logprobs!.content![0].top_logprobs).toHaveLength(2);
  expect(out.usage!.prompt_tokens).toBeGreaterThan(1000); // the image part is counted
});

test('the Responses API: a tool loop with previous_response_id, and a streamed structured answer', async () => {
  const client = openai();
  const responseTools = [{ type: 'function' as const, name: 'get_weather', parameters: weatherParameters, strict: true }];
  const first = await client.responses.create({ model: 'svc-chat-1', input: 'Weather in Nice?', tools: responseTools });
  const call = first.output.find((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
  expect(call.name).toBe('get_weather');
  const second = await client.responses.create({
    model: 'svc-chat-1',
    previous_response_id: first.id,
    tools: responseTools,
    input: [{ type: 'function_call_output', call_id: call.call_id, output: 'rain' }],
  });
  expect(second.output_text).toContain('"rain"');

  const { zodTextFormat } = await import('openai/helpers/zod');
  const stream = client.responses.stream({
    model: 'svc-chat-1',
    input: 'a city',
    text: { format: zodTextFormat(z.object({ name: z.string(), population: z.number() }), 'city') },
  });
  const final = await stream.finalResponse();
  expect(z.object({ name: z.string(), population: z.number() }).parse(JSON.parse(final.output_text))).toBeTruthy();
});

test('the AI SDK and LangChain run their agent loops on a test key', async () => {
  const ai = createOpenAI({ apiKey: rig.test.secret, baseURL: `${rig.gw.url}/v1` });
  const run = await generateText({
    model: ai('svc-chat-1'),
    prompt: 'Weather in Oslo?',
    tools: { weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async () => 'snow' }) },
    stopWhen: stepCountIs(3),
    maxRetries: 0,
  });
  expect(run.steps).toHaveLength(2);
  expect(run.text).toContain('snow');
  const { object } = await generateObject({
    model: ai.chat('svc-chat-1'),
    schema: z.object({ ok: z.boolean(), tags: z.array(z.string()) }),
    prompt: 'x',
    maxRetries: 0,
  });
  expect(object.ok).toBe(true);

  const lc = new ChatOpenAI({ model: 'svc-chat-1', apiKey: rig.test.secret, configuration: { baseURL: `${rig.gw.url}/v1` }, maxRetries: 0 });
  const called = await lc.bindTools([{ name: 'lookup', description: 'Look up', schema: z.object({ q: z.string() }) }]).invoke('find cats');
  expect(called.tool_calls![0]).toMatchObject({ name: 'lookup', args: { q: expect.any(String) } });
  expect(await lc.withStructuredOutput(z.object({ answer: z.string() })).invoke('q')).toEqual({ answer: expect.any(String) });
});
