import { chatPayload } from '../../../src/providers/openai-compatible/chat-payload';
import { estimatePromptTokens, IMAGE_PART_TOKENS } from '../../../src/domain/chat/prompt-tokens';
import type { ChatRequest } from '../../../src/domain/chat/chat-port';

const request = (over: Partial<ChatRequest> = {}): ChatRequest => ({
  upstreamModel: 'up',
  publicModel: 'svc-chat-1',
  messages: [
    { role: 'developer', content: 'be brief' },
    { role: 'user', content: 'hi' },
  ],
  maxTokens: 64,
  maxTokensParam: 'max_completion_tokens',
  n: 1,
  options: {},
  ...over,
});

test('the limit travels under the name the route asks for, and n only when it is not 1', () => {
  expect(chatPayload(request(), false)).toMatchObject({ max_completion_tokens: 64 });
  expect(chatPayload(request(), false)).not.toHaveProperty('max_tokens');
  expect(chatPayload(request({ maxTokensParam: 'max_tokens', n: 3 }), false)).toMatchObject({ max_tokens: 64, n: 3 });
  expect(chatPayload(request(), false)).not.toHaveProperty('n');
});

test('options are forwarded as sent; developer becomes system for compatible servers; streams ask for usage', () => {
  const options = {
    tools: [{ type: 'function' as const, function: { name: 'f' } }],
    tool_choice: 'required' as const,
    logit_bias: { '1': 2 },
    metadata: { a: 'b' },
  };
  const payload = chatPayload(request({ options }), true);
  expect(payload).toMatchObject({ ...options, model: 'up', stream: true, stream_options: { include_usage: true } });
  expect((payload.messages as { role: string }[])[0].role).toBe('system');
});

test('the prompt estimate counts tools, the response schema, image parts and tool calls', () => {
  const base = estimatePromptTokens(request().messages, {});
  const withTools = estimatePromptTokens(request().messages, {
    tools: [
      {
        type: 'function',
        function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string', description: 'a long description of the query' } } } },
      },
    ],
  });
  expect(withTools).toBeGreaterThan(base + 10);
  const withSchema = estimatePromptTokens(request().messages, {
    response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object', properties: { a: { type: 'string' } } } } },
  });
  expect(withSchema).toBeGreaterThan(base + 5);
  const withImage = estimatePromptTokens(
    [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'image_url', image_url: { url: 'https://x/y.png' } },
        ],
      },
    ],
    {},
  );
  expect(withImage).toBeGreaterThanOrEqual(IMAGE_PART_TOKENS);
  const withCall = estimatePromptTokens(
    [
      ...request().messages,
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":"a rather long query string"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'result' },
    ],
    {},
  );
  expect(withCall).toBeGreaterThan(base + 10);
});
