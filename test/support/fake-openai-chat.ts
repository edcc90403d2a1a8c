/**
 * The chat side of the fake OpenAI upstream for what agents send: it validates a chat request as
 * strictly as OpenAI does (unknown fields, tool turns out of order, a named tool that is not
 * declared) and answers tool calls, structured outputs, logprobs and several choices, JSON or
 * streamed, with usage details. Arguments and JSON are derived from the schemas sent: strings
 * are "Paris", numbers 21, booleans true, so a test knows what to expect.
 */
import type { ServerResponse } from 'node:http';

const KNOWN_FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'stream',
  'stream_options',
  'temperature',
  'top_p',
  'n',
  'stop',
  'seed',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'logprobs',
  'top_logprobs',
  'frequency_penalty',
  'presence_penalty',
  'logit_bias',
  'user',
  'metadata',
  'reasoning_effort',
  'service_tier',
  'store',
  'prediction',
  'verbosity',
  'prompt_cache_key',
  'prompt_cache_retention',
  'safety_identifier',
  'modalities',
  'audio',
  'web_search_options',
]);

export const FAKE_AGENT_USAGE = {
  prompt_tokens: 40,
  completion_tokens: 12,
  total_tokens: 52,
  prompt_tokens_details: { cached_tokens: 8, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 4, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};

/** True when a request needs the agent-aware answer rather than the fixed reply. */
export function wantsAgentAnswer(body: any): boolean {
  return Boolean(
    body?.tools ||
    body?.response_format ||
    body?.logprobs ||
    (body?.n ?? 1) > 1 ||
    body?.messages?.some((m: any) => m.role === 'tool' || m.tool_calls || Array.isArray(m.content)),
  );
}

/** OpenAI's checks, in OpenAI's words; undefined when the request is acceptable. */
export function validateChat(body: any): { message: string; param: string | null } | undefined {
  for (const field of Object.keys(body ?? {})) {
    if (!KNOWN_FIELDS.has(field)) return { message: `Unrecognized request argument supplied: ${field}`, param: null };
  }
  if (!Array.isArray(body?.messages) || body.messages.length === 0) return { message: "Invalid 'messages': empty array.", param: 'messages' };
  let open = new Set<string>();
  for (const [i, m] of (body.messages as any[]).entries()) {
    if (m.role === 'tool') {
      if (!open.has(m.tool_call_id)) {
        return {
          message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          param: `messages.[${i}].role`,
        };
      }
      open.delete(m.tool_call_id);
      continue;
    }
    if (open.size > 0) {
      return { message: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.", param: 'messages' };
    }
    if (m.role === 'assistant') open = new Set((m.tool_calls ?? []).map((c: any) => c.id));
  }
  const choice = body.tool_choice;
  if (choice && typeof choice === 'object' && !body.tools?.some((t: any) => t.function?.name === choice.function?.name)) {
    return { message: `Invalid value for 'tool_choice': tool '${choice.function?.name}' not found in 'tools'.`, param: 'tool_choice' };
  }
  return undefined;
}

/** A value for a JSON schema: strings "Paris", numbers 21, booleans true, first enum value. */
export function fakeValue(schema: any): unknown {
  if (!schema || typeof schema !== 'object') return 'Paris';
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf) return fakeValue(schema.anyOf.find((s: any) => s.type !== 'null') ?? schema.anyOf[0]);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  if (type === 'object' || schema.properties) {
    return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, fakeValue(v)]));
  }
  if (type === 'array') return [fakeValue(schema.items)];
  if (type === 'number' || type === 'integer') return 21;
  if (type === 'boolean') return true;
  return 'Paris';
}

interface Answer {
  content: string | null;
  toolCalls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  finishReason: string;
}

function answerOf(body: any, index: number): Answer {
  const last = body.messages[body.messages.length - 1];
  const choice = body.tool_choice;
  const tools: any[] = body.tools ?? [];
  const callTool = tools.length > 0 && choice !== 'none' && (choice === 'required' || typeof choice === 'object' || last.role === 'user');
  if (callTool) {
    const tool = typeof choice === 'object' ? tools.find((t) => t.function.name === choice.function.name) : tools[0];
    const args = JSON.stringify(fakeValue(tool.function.parameters ?? {}));
    return {
      content: null,
      toolCalls: [{ id: `call_fake_${index}_${body.messages.length}`, type: 'function', function: { name: tool.function.name, arguments: args } }],
      finishReason: 'tool_calls',
    };
  }
  const format = body.response_format;
  if (format?.type === 'json_schema') return { content: JSON.stringify(fakeValue(format.json_schema.schema)), finishReason: 'stop' };
  if (format?.type === 'json_object') return { content: '{"answer":"Paris"}', finishReason: 'stop' };
  const toolResults = body.messages
    .filter((m: any) => m.role === 'tool')
    .map((m: any) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
  return { content: toolResults.length > 0 ? `Tool said: ${toolResults.at(-1)}` : `Answer ${index}`, finishReason: 'stop' };
}

const LOGPROBS = (text: string) => ({
  content: [{ token: text.slice(0, 4), logprob: -0.25, bytes: [...Buffer.from(text.slice(0, 4))], top_logprobs: [] }],
  refusal: null,
});

export function sendAgentCompletion(res: ServerResponse, body: any): void {
  const choices = Array.from({ length: body.n ?? 1 }, (_, i) => {
    const a = answerOf(body, i);
    const message: any = { role: 'assistant', content: a.content, refusal: null };
    if (a.toolCalls) message.tool_calls = a.toolCalls;
    return { index: i, message, logprobs: body.logprobs && a.content ? LOGPROBS(a.content) : null, finish_reason: a.finishReason };
  });
  const text = JSON.stringify({ id: 'chatcmpl-agent', object: 'chat.completion', created: 0, model: body.model, choices, usage: FAKE_AGENT_USAGE });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function streamAgentCompletion(res: ServerResponse, body: any): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (choices: unknown[], extra: object = {}) =>
    res.write(`data: ${JSON.stringify({ id: 'chatcmpl-agent', object: 'chat.completion.chunk', created: 0, model: body.model, choices, ...extra })}\n\n`);
  for (let i = 0; i < (body.n ?? 1); i++) {
    const a = answerOf(body, i);
    send([{ index: i, delta: { role: 'assistant', content: a.content === null ? null : '' }, finish_reason: null }]);
    if (a.content) {
      for (const piece of [a.content.slice(0, 5), a.content.slice(5)]) {
        if (piece) send([{ index: i, delta: { content: piece }, logprobs: body.logprobs ? LOGPROBS(piece) : null, finish_reason: null }]);
      }
    }
    for (const [k, call] of (a.toolCalls ?? []).entries()) {
      send([
        {
          index: i,
          delta: { tool_calls: [{ index: k, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] },
          finish_reason: null,
        },
      ]);
      const args = call.function.arguments;
      for (const piece of [args.slice(0, 3), args.slice(3)]) {
        if (piece) send([{ index: i, delta: { tool_calls: [{ index: k, function: { arguments: piece } }] }, finish_reason: null }]);
      }
    }
    send([{ index: i, delta: {}, finish_reason: a.finishReason }]);
  }
  send([], { usage: FAKE_AGENT_USAGE });
  res.end('data: [DONE]\n\n');
}
