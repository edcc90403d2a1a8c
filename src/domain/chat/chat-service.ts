import { randomBytes } from 'node:crypto';
import type { Catalog } from '../catalog/catalog';
import type { ChatModel } from '../catalog/model';
import type { KeyPrincipal } from '../keys/principal';
import { assertModelAllowed } from '../keys/permissions';
import type { Billing, Hold } from '../credits/billing';
import type { RateLimiter } from '../ratelimit/rate-limiter';
import { enforceRateLimit } from '../ratelimit/enforce';
import { invalidRequest } from '../errors/domain-error';
import { parseInput } from '../shared/validate';
import { chatCostMicro, microToCredits } from '../shared/money';
import type { ChatMessage, ChatProvider, ChatUsage, FinishReason } from '../../providers/ports';
import type { ProviderRegistry } from '../../providers/provider-registry';
import { countPromptTokens, countTokens } from './tokens';
import { chatRequestSchema, toProviderMessages } from './chat-request';

/** Room for a provider whose tokenizer counts the prompt higher than our estimate. */
const PROMPT_HOLD_MARGIN = 1.25;
const PROMPT_HOLD_EXTRA = 16;

export interface ChatCallInfo {
  id: string;
  created: number;
  model: string;
  includeUsage: boolean;
  /** x-ratelimit-* headers for the response. */
  headers: Record<string, string>;
}

export interface ChatCompletionResult extends ChatCallInfo {
  content: string;
  finishReason: FinishReason;
  usage: ChatUsage;
  /** What the call cost (or, for a test key, what it would have cost), in credits. */
  costCredits: number;
}

export type ChatStreamItem =
  | { type: 'delta'; text: string }
  | { type: 'finish'; finishReason: FinishReason; usage: ChatUsage; costCredits: number };

interface PreparedCall {
  info: ChatCallInfo;
  model: ChatModel;
  provider: ChatProvider;
  messages: ChatMessage[];
  promptEstimate: number;
  maxTokens: number;
  request: { temperature?: number; topP?: number; stop?: string[]; seed?: number };
  hold: Hold;
}

/** POST /v1/chat/completions: authorise, hold, call the provider, charge the actual usage. */
export class ChatService {
  constructor(
    private readonly catalog: Catalog,
    private readonly providers: ProviderRegistry,
    private readonly billing: Billing,
    private readonly limiter: RateLimiter,
  ) {}

  private async prepare(key: KeyPrincipal, input: unknown): Promise<PreparedCall> {
    const body = parseInput(chatRequestSchema, input);
    const model = this.catalog.require(body.model, 'chat');
    assertModelAllowed(key, model.id);
    const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? model.defaultMaxTokens;
    if (maxTokens > model.maxOutputTokens) {
      throw invalidRequest(`max_tokens is too large: ${model.id} writes at most ${model.maxOutputTokens} tokens.`, body.max_completion_tokens ? 'max_completion_tokens' : 'max_tokens');
    }
    const headers = await enforceRateLimit(this.limiter, key.keyId, 'chat');
    const messages = toProviderMessages(body);
    const promptEstimate = countPromptTokens(messages);
    const holdTokens = Math.ceil(promptEstimate * PROMPT_HOLD_MARGIN) + PROMPT_HOLD_EXTRA + maxTokens;
    const hold = await this.billing.hold(key, chatCostMicro(holdTokens, model.creditsPer10kTokens));
    const stop = body.stop == null ? undefined : Array.isArray(body.stop) ? body.stop : [body.stop];
    return {
      info: {
        id: `chatcmpl-${randomBytes(12).toString('base64url')}`,
        created: Math.floor(Date.now() / 1000),
        model: model.id,
        includeUsage: body.stream_options?.include_usage === true,
        headers,
      },
      model,
      provider: this.providers.chat(model, key.mode),
      messages,
      promptEstimate,
      maxTokens,
      request: { temperature: body.temperature ?? undefined, topP: body.top_p ?? undefined, stop, seed: body.seed ?? undefined },
      hold,
    };
  }

  /** Parses the body far enough to tell a streamed call from a plain one. */
  isStream(input: unknown): boolean {
    return typeof input === 'object' && input !== null && (input as { stream?: unknown }).stream === true;
  }

  private costOf(call: PreparedCall, usage: ChatUsage): number {
    return chatCostMicro(usage.promptTokens + usage.completionTokens, call.model.creditsPer10kTokens);
  }

  async complete(key: KeyPrincipal, input: unknown, signal?: AbortSignal): Promise<ChatCompletionResult> {
    const call = await this.prepare(key, input);
    let result;
    try {
      result = await call.provider.complete({ upstreamModel: call.model.route.upstreamModel, messages: call.messages, maxTokens: call.maxTokens, signal, ...call.request });
    } catch (err) {
      await this.billing.settle(call.hold, 0);
      throw err;
    }
    const usage = result.usage.promptTokens + result.usage.completionTokens > 0
      ? result.usage
      : { promptTokens: call.promptEstimate, completionTokens: countTokens(result.content) };
    const cost = this.costOf(call, usage);
    await this.billing.settle(call.hold, cost);
    return { ...call.info, content: result.content, finishReason: result.finishReason, usage, costCredits: microToCredits(cost) };
  }

  /**
   * A streamed call. The hold is placed before this resolves (so 402/429 are ordinary HTTP
   * errors); the stream then charges the provider's usage, or, when the client goes away, the
   * prompt plus what was sent. A provider failure charges nothing.
   */
  async stream(key: KeyPrincipal, input: unknown, signal: AbortSignal): Promise<{ info: ChatCallInfo; items: AsyncGenerator<ChatStreamItem> }> {
    const call = await this.prepare(key, input);
    return { info: call.info, items: this.run(call, signal) };
  }

  private async *run(call: PreparedCall, signal: AbortSignal): AsyncGenerator<ChatStreamItem> {
    let sent = '';
    let settled = false;
    try {
      for await (const event of call.provider.stream({ upstreamModel: call.model.route.upstreamModel, messages: call.messages, maxTokens: call.maxTokens, signal, ...call.request })) {
        if (event.type === 'delta') {
          sent += event.text;
          yield event;
          continue;
        }
        const usage = event.usage ?? { promptTokens: call.promptEstimate, completionTokens: countTokens(sent) };
        const cost = this.costOf(call, usage);
        await this.billing.settle(call.hold, cost);
        settled = true;
        yield { type: 'finish', finishReason: event.finishReason, usage, costCredits: microToCredits(cost) };
        return;
      }
    } catch (err) {
      if (!signal.aborted) {
        await this.billing.settle(call.hold, 0);
        settled = true;
        throw err;
      }
    } finally {
      // The consumer stopped early (client disconnect): charge the prompt and what was sent.
      if (!settled) {
        await this.billing.settle(call.hold, this.costOf(call, { promptTokens: call.promptEstimate, completionTokens: countTokens(sent) }));
      }
    }
  }
}
