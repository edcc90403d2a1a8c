/**
 * The chat capability as the domain sees it: the OpenAI chat-completions shapes (they are the
 * lingua franca every compatible server, SDK and agent framework speaks), owned here so the
 * domain depends on no provider module. Providers implement ChatProvider.
 *
 * Field names inside messages, tools and options stay in OpenAI's snake_case on purpose: they
 * are forwarded to compatible upstreams as they are, and a rename would only be a place to lose
 * one.
 */
import type { CallSignal } from '../shared/call-signal';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'refusal'; refusal: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
  | { type: 'input_audio'; input_audio: { data: string; format: 'wav' | 'mp3' } }
  | { type: 'file'; file: { file_data?: string; file_id?: string; filename?: string } };

export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface ChatMessage {
  role: ChatRole;
  content: string | ContentPart[] | null;
  name?: string;
  /** Assistant turns that called tools. */
  tool_calls?: ToolCall[];
  /** Tool results: the call they answer. */
  tool_call_id?: string;
  refusal?: string | null;
}

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null };
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null } };

/**
 * Everything of the client's request that a provider acts on besides the messages, in OpenAI's
 * names. The gateway validates each field and forwards it as sent.
 */
export interface ChatOptions {
  temperature?: number;
  top_p?: number;
  stop?: string[];
  seed?: number;
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: ResponseFormat;
  logprobs?: boolean;
  top_logprobs?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  logit_bias?: Record<string, number>;
  user?: string;
  metadata?: Record<string, string>;
  reasoning_effort?: string;
  service_tier?: string;
  store?: boolean;
  prediction?: unknown;
  verbosity?: string;
  prompt_cache_key?: string;
  prompt_cache_retention?: 'in-memory' | '24h';
  safety_identifier?: string;
  modalities?: string[];
}

export interface ChatRequest {
  /** The provider-side model id (the catalog's upstream model, not the public id). */
  upstreamModel: string;
  /** The public model id, so a provider can speak of the model without naming its upstream. */
  publicModel: string;
  messages: ChatMessage[];
  maxTokens: number;
  /** The name the output limit travels under upstream. */
  maxTokensParam: 'max_tokens' | 'max_completion_tokens';
  /** Choices to generate. */
  n: number;
  options: ChatOptions;
  /** A stream's `stream_options.include_obfuscation`, when the client sent it. */
  includeObfuscation?: boolean;
  signal?: CallSignal;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  /** `prompt_tokens_details` as reported (cached_tokens, audio_tokens), numbers only. */
  promptDetails?: Record<string, number>;
  /** `completion_tokens_details` as reported (reasoning_tokens, …), numbers only. */
  completionDetails?: Record<string, number>;
}

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  refusal: string | null;
  tool_calls?: ToolCall[];
  /** What the provider cited (OpenAI's `url_citation` objects), as it sent them. */
  annotations?: unknown[];
}

export interface ChatChoice {
  index: number;
  message: AssistantMessage;
  finishReason: FinishReason;
  /** OpenAI's `logprobs` object (`{ content, refusal }`) as the provider produced it, or null. */
  logprobs: unknown;
}

export interface ChatResult {
  choices: ChatChoice[];
  /** Usage as reported by the provider; zero counts mean it reported none. */
  usage: ChatUsage;
  /** The provider's backend configuration and the tier that served the call, when it says. */
  systemFingerprint?: string;
  serviceTier?: string;
}

/** One streamed tool-call fragment: the first carries id and name, later ones argument text. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChoiceDelta {
  index: number;
  /** `content: null` only on the gateway's opening delta of a choice that answers with a tool call, as OpenAI opens one. */
  delta: { role?: 'assistant'; content?: string | null; refusal?: string; tool_calls?: ToolCallDelta[] };
  finishReason: FinishReason | null;
  logprobs?: unknown;
}

/** What a stream's chunks say about the backend that served them (OpenAI repeats it on every chunk). */
export interface StreamStamp {
  systemFingerprint?: string;
  serviceTier?: string;
}

export type ChatStreamEvent =
  /** `stamp` is what the provider had said by this chunk, when it said anything. */
  | { type: 'chunk'; choices: ChoiceDelta[]; stamp?: StreamStamp }
  /** Last event of a stream; usage is present when the provider reported it. */
  | { type: 'finish'; usage?: ChatUsage };

export interface ChatProvider {
  complete(request: ChatRequest): Promise<ChatResult>;
  /** Yields chunks then exactly one finish event. Aborting `signal` stops the upstream call. */
  stream(request: ChatRequest): AsyncIterable<ChatStreamEvent>;
}

/** The text a streamed chunk carries (content, refusal, tool names and arguments): what a client received. */
export function textOfDelta(choices: readonly ChoiceDelta[]): string {
  let text = '';
  for (const c of choices) {
    if (c.delta.content) text += c.delta.content;
    if (c.delta.refusal) text += c.delta.refusal;
    for (const t of c.delta.tool_calls ?? []) text += (t.function?.name ?? '') + (t.function?.arguments ?? '');
  }
  return text;
}

/** The text of whole answers, counted the same way as a stream of them. */
export function textOfChoices(choices: readonly ChatChoice[]): string {
  let text = '';
  for (const c of choices) {
    text += (c.message.content ?? '') + (c.message.refusal ?? '');
    for (const t of c.message.tool_calls ?? []) text += t.function.name + t.function.arguments;
  }
  return text;
}

/** Plain text of a message's content, parts joined (non-text parts contribute nothing). */
export function textOfContent(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!content) return '';
  let text = '';
  for (const p of content) {
    if (p.type === 'text') text += p.text;
    else if (p.type === 'refusal') text += p.refusal;
  }
  return text;
}
