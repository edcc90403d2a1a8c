/**
 * LangChain JS (`@langchain/openai`) against the gateway routed to the strict fake upstream:
 * a `bindTools` round trip (the model calls the tool, the ToolMessage goes back, the model
 * answers with it) and `withStructuredOutput`, on chat completions and on the Responses API.
 */
import { ChatOpenAI } from '@langchain/openai';
import { HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { z } from 'zod';
import { useAgentRig } from '../support/agent-gateway';

const rig = useAgentRig(10);
beforeEach(() => {
  rig.upstream.requests.length = 0;
});

const chatModel = (useResponsesApi = false) =>
  new ChatOpenAI({ model: 'svc-chat-1', apiKey: rig.live.secret, configuration: { baseURL: `${rig.gw.url}/v1` }, maxRetries: 0, useResponsesApi });

const weatherSchema = z.object({ city: z.string().describe('City name'), unit: z.enum(['celsius', 'fahrenheit']) });

test.each([false, true])('bindTools round trip (Responses API: %s)', async (useResponsesApi) => {
  const model = chatModel(useResponsesApi).bindTools([{ name: 'get_weather', description: 'Weather in a city', schema: weatherSchema }]);
  const history: BaseMessage[] = [new HumanMessage('Weather in Paris?')];
  const first = await model.invoke(history);
  expect(first.tool_calls).toHaveLength(1);
  expect(first.tool_calls![0]).toMatchObject({ name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } });
  history.push(first, new ToolMessage({ tool_call_id: first.tool_calls![0].id!, content: '{"temp":21}' }));
  const second = await model.invoke(history);
  expect(second.text).toBe('Tool said: {"temp":21}');
  const sent = rig.chatRequests();
  expect(sent).toHaveLength(2);
  expect(sent[1].messages.at(-1)).toEqual({ role: 'tool', tool_call_id: first.tool_calls![0].id, content: '{"temp":21}' });
  await rig.expectCharged(2);
});

test.each([false, true])('withStructuredOutput returns the parsed object (Responses API: %s)', async (useResponsesApi) => {
  const structured = chatModel(useResponsesApi).withStructuredOutput(z.object({ city: z.string(), degrees: z.number() }), { name: 'weather' });
  expect(await structured.invoke('Paris weather')).toEqual({ city: 'Paris', degrees: 21 });
  const [sent] = rig.chatRequests();
  // LangChain picks json_schema or a forced tool call, depending on the model; either must arrive intact.
  expect(sent.response_format?.type === 'json_schema' || sent.tool_choice?.function?.name === 'weather').toBe(true);
  await rig.expectCharged(1);
});
