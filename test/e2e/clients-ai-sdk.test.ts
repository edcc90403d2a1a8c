/**
 * The Vercel AI SDK (`ai` with `@ai-sdk/openai`) against the gateway routed to the strict fake
 * upstream: its default provider model (the Responses API) and its `.chat()` model, in
 * multi-step tool loops, streaming and structured objects. Checks what the application got,
 * what the upstream received, and the charge.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { generateImage, generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import OpenAI, { toFile } from 'openai';
import { makePng } from '../support/fake-openai-upstream';
import { decodePng } from '../support/png';
import { z } from 'zod';
import { useAgentRig } from '../support/agent-gateway';

const rig = useAgentRig(10);
beforeEach(() => {
  rig.upstream.requests.length = 0;
});

const provider = () => createOpenAI({ apiKey: rig.live.secret, baseURL: `${rig.gw.url}/v1` });

const weatherTool = () =>
  tool({
    description: 'Weather in a city',
    inputSchema: z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']) }),
    execute: async ({ city, unit }) => ({ city, unit, temp: 21 }),
  });

test.each([
  ['the default provider model (Responses API)', (p: ReturnType<typeof provider>) => p('svc-chat-1')],
  ['the .chat() model (chat completions)', (p: ReturnType<typeof provider>) => p.chat('svc-chat-1')],
])('generateText with a tool over several steps: %s', async (_name, model) => {
  const result = await generateText({
    model: model(provider()),
    prompt: 'What is the weather in Paris?',
    tools: { weather: weatherTool() },
    stopWhen: stepCountIs(3),
    maxRetries: 0,
  });
  expect(result.steps).toHaveLength(2);
  expect(result.steps[0].toolCalls[0]).toMatchObject({ toolName: 'weather', input: { city: 'Paris', unit: 'celsius' } });
  expect(result.steps[0].toolResults[0]).toMatchObject({ output: { city: 'Paris', unit: 'celsius', temp: 21 } });
  expect(result.text).toBe('Tool said: {"city":"Paris","unit":"celsius","temp":21}');
  expect(result.totalUsage.inputTokens).toBe(80);
  const [first, second] = rig.chatRequests();
  expect(first.tools[0]).toMatchObject({ type: 'function', function: { name: 'weather' } });
  // The second turn carries the call and its result, paired by id, as OpenAI requires.
  const callId = second.messages.find((m: any) => m.tool_calls)?.tool_calls[0].id;
  expect(callId).toEqual(expect.any(String));
  expect(second.messages.find((m: any) => m.role === 'tool')).toMatchObject({ tool_call_id: callId });
  await rig.expectCharged(2);
});

test('streamText with a tool on the .chat() model: the step that calls the tool has no empty text part before the call', async () => {
  const result = streamText({
    model: provider().chat('svc-chat-1'),
    prompt: 'What is the weather in Paris?',
    tools: { weather: weatherTool() },
    stopWhen: stepCountIs(3),
    maxRetries: 0,
  });
  await result.consumeStream();
  const steps = await result.steps;
  expect(steps).toHaveLength(2);
  // The gateway opened the choice with content "" (OpenAI opens a tool call with null): a text part of "" came first.
  expect(steps[0].content.map((p) => p.type)).toEqual(['tool-call', 'tool-result']);
  expect(await result.text).toBe('Tool said: {"city":"Paris","unit":"celsius","temp":21}');
  await rig.expectCharged(2);
});

test('streamText streams the text of the Responses model', async () => {
  const result = streamText({ model: provider()('svc-chat-1'), prompt: 'Say something', maxRetries: 0 });
  const parts: string[] = [];
  for await (const delta of result.textStream) parts.push(delta);
  expect(parts.join('')).toBe('Answer 0');
  expect(parts.length).toBeGreaterThanOrEqual(2);
  expect((await result.usage).totalTokens).toBe(52);
  expect(rig.chatRequests()[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  await rig.expectCharged(1);
});

test('generateObject returns an object valid against its zod schema, through both models', async () => {
  const schema = z.object({ city: z.string(), degrees: z.number(), sunny: z.boolean() });
  for (const model of [provider()('svc-chat-1'), provider().chat('svc-chat-1')]) {
    const { object } = await generateObject({ model, schema, prompt: 'Paris weather', maxRetries: 0 });
    expect(object).toEqual({ city: 'Paris', degrees: 21, sunny: true });
  }
  const [viaResponses, viaChat] = rig.chatRequests();
  expect(viaResponses.response_format).toMatchObject({ type: 'json_schema' });
  expect(viaChat.response_format).toMatchObject({ type: 'json_schema' });
  await rig.expectCharged(2);
});

// The AI SDK's editImage never sends response_format and reads only b64_json (it expects
// gpt-image); an edit answered with `url` alone fails there with "Invalid JSON response". An edit
// that names no format answers both; one that names one gets that one.
test('generateImage with input images (an edit) gets its images, on a test key; the openai SDK gets url and b64_json unless it names one', async () => {
  const png = makePng(48, 32);
  const ai = createOpenAI({ apiKey: rig.test.secret, baseURL: `${rig.gw.url}/v1` });
  const result = await generateImage({ model: ai.image('svc-image-edit-1'), prompt: { text: 'add a hat', images: [png, png], mask: png }, maxRetries: 0 });
  expect(result.images).toHaveLength(1);
  expect(decodePng(Buffer.from(result.images[0].uint8Array))).toMatchObject({ width: 48, height: 32 });

  const openai = new OpenAI({ apiKey: rig.test.secret, baseURL: `${rig.gw.url}/v1`, maxRetries: 0 });
  const edit = async (response_format?: 'url' | 'b64_json') =>
    openai.images.edit({
      model: 'svc-image-edit-1',
      prompt: 'add a hat',
      image: await toFile(png, 'a.png', { type: 'image/png' }),
      ...(response_format ? { response_format } : {}),
    });
  const both = (await edit()).data![0];
  const fetched = Buffer.from(await (await fetch(both.url!)).arrayBuffer());
  expect(fetched.equals(Buffer.from(both.b64_json!, 'base64'))).toBe(true);
  const urlOnly = (await edit('url')).data![0];
  expect(urlOnly.url).toEqual(expect.any(String));
  expect(urlOnly).not.toHaveProperty('b64_json');
  const b64Only = (await edit('b64_json')).data![0];
  expect(b64Only.b64_json).toEqual(expect.any(String));
  expect(b64Only).not.toHaveProperty('url');
});
