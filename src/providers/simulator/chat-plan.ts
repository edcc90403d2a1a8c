/**
 * What the simulator answers, decided once per choice: a call to a tool (the chosen one, or the
 * first, with arguments valid against its schema) when the conversation asks for one, else text
 * (plain, a JSON object, or JSON valid against the requested schema) that reads the user's
 * words or the tool results. A partner for testing agent loops: same request, same answer.
 */
import type { ChatRequest, FinishReason, FunctionTool, ToolCall } from '../ports';
import { splitIntoTokens } from '../../domain/chat/tokens';
import { composeReply, conversationHash, excerpt, lastUserText } from './chat-reply';
import { JsonSampler } from './json-sample';
import { fnv1a } from './seed';

export interface PlannedChoice {
  /** Text pieces (whole tokens) of the content, already cut at stop and maxTokens. */
  pieces: string[];
  toolCall?: ToolCall;
  finishReason: FinishReason;
}

/**
 * The simulator's output limit: completion tokens of one call, shared by its `n` choices. A free
 * test-key call of `n: 8`, `max_tokens: 8192`, `top_logprobs: 20` and a schema asking for
 * 100,000 items would build a 47 MB answer in 1.1 s of the event loop; a simulated answer is for
 * trying shapes, not volume, so it stops here with `finish_reason: "length"`, as a model stops at
 * its own output limit.
 */
export const SIMULATED_COMPLETION_TOKENS = 2048;

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

function callId(hash: number): string {
  let id = 'call_';
  let h = hash >>> 0;
  for (let i = 0; i < 24; i++) {
    h = fnv1a(String(i), h);
    id += ID_ALPHABET[h % ID_ALPHABET.length];
  }
  return id;
}

/** The tool this turn calls, or undefined when the model should answer in text. */
function toolToCall(request: ChatRequest): FunctionTool | undefined {
  const { tools, tool_choice: choice } = request.options;
  if (!tools?.length || choice === 'none') return undefined;
  if (typeof choice === 'object') return tools.find((t) => t.function.name === choice.function.name);
  if (choice === 'required') return tools[0];
  // `auto`: call a tool when the user just spoke; after tool results, answer with them.
  return request.messages[request.messages.length - 1]?.role === 'user' ? tools[0] : undefined;
}

/** Words for generated strings: the user's message, short. */
function wordsOf(request: ChatRequest): string {
  return excerpt(lastUserText(request.messages), 40).replace(/\.\.\.$/, '');
}

function contentText(request: ChatRequest, variant: number): string {
  const seed = request.options.seed === undefined ? (variant === 0 ? undefined : variant) : request.options.seed + variant;
  const reply = composeReply(request.upstreamModel, request.messages, seed);
  const format = request.options.response_format;
  if (format?.type === 'json_object') return JSON.stringify({ reply });
  if (format?.type === 'json_schema') {
    const schema = format.json_schema.schema ?? { type: 'object', properties: {} };
    return JSON.stringify(new JsonSampler(schema, wordsOf(request)).sample());
  }
  return reply;
}

/** Cut before the earliest stop string, as OpenAI does. */
function applyStop(content: string, stop: string[] | undefined): string {
  let cut = content.length;
  for (const s of stop ?? []) {
    if (s === '') continue;
    const at = content.indexOf(s);
    if (at >= 0 && at < cut) cut = at;
  }
  return content.slice(0, cut);
}

export function planChoice(request: ChatRequest, variant: number): PlannedChoice {
  const share = Math.floor(SIMULATED_COMPLETION_TOKENS / Math.max(1, request.n));
  const limit = Math.max(0, Math.min(share, Math.floor(request.maxTokens)));
  const tool = toolToCall(request);
  if (tool) {
    const args = JSON.stringify(new JsonSampler(tool.function.parameters ?? { type: 'object', properties: {} }, wordsOf(request)).sample());
    const id = callId(conversationHash(request.upstreamModel, request.messages, variant));
    return { pieces: [], toolCall: { id, type: 'function', function: { name: tool.function.name, arguments: args } }, finishReason: 'tool_calls' };
  }
  const pieces = splitIntoTokens(applyStop(contentText(request, variant), request.options.stop));
  if (pieces.length > limit) return { pieces: pieces.slice(0, limit), finishReason: 'length' };
  return { pieces, finishReason: 'stop' };
}

/** OpenAI-shaped logprobs for the pieces of a text: deterministic, plausible, never above 0. */
export function logprobsFor(pieces: readonly string[], top: number): { content: unknown[]; refusal: null } {
  return {
    content: pieces.map((token, i) => {
      const logprob = -((fnv1a(token, i) % 1000) / 4000);
      const alternatives = Array.from({ length: top }, (_, k) => {
        const alt = k === 0 ? token : `${token.trim() || '_'}${k}`;
        return { token: alt, logprob: k === 0 ? logprob : logprob - k, bytes: [...Buffer.from(alt)] };
      });
      return { token, logprob, bytes: [...Buffer.from(token)], top_logprobs: alternatives };
    }),
    refusal: null,
  };
}
