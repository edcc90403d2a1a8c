import type { IdempotentCall } from '../idempotency/idempotency-service';
import type { Catalog } from '../catalog/catalog';
import type { ChatModel } from '../catalog/model';
import type { KeyPrincipal } from '../keys/principal';
import { assertModelAllowed } from '../keys/permissions';
import type { Billing, Hold } from '../credits/billing';
import type { RateLimiter } from '../ratelimit/rate-limiter';
import { enforceRateLimit } from '../ratelimit/enforce';
import { randomIdText } from '../shared/ids';
import { parseInput } from '../shared/validate';
import { upstreamError } from '../errors/domain-error';
import { chatCostMicro, microToCredits } from '../shared/money';
import type { ChatProvider, ChatRequest, ChatResult, ChatUsage, ChoiceDelta, StreamStamp } from './chat-port';
import { textOfChoices, textOfDelta } from './chat-port';
import { readChatCall } from './chat-call';
import { chatRequestSchema } from './chat-request';
import { estimatePromptTokens } from './prompt-tokens';
import { countTokens } from './tokens';
import { billableUsage, type UsageBounds } from './billable-usage';
import type { UrlGuard } from '../ports/url-guard';
import { checkImagePartUrls } from './image-part-urls';
import type { CallSignal } from '../shared/call-signal';
import type { CallLog } from '../requests/call-log';
import { NO_TRACING, type Tracing } from '../ports/tracing';

/** Room for a provider whose tokenizer counts the prompt higher than our estimate. */
const PROMPT_HOLD_MARGIN = 1.25;
const PROMPT_HOLD_EXTRA = 16;

/** Finds the provider that serves a chat model for a key's mode (live or test). */
export interface ChatProviders {
  chat(model: ChatModel, mode: KeyPrincipal['mode']): ChatProvider;
}

export interface ChatCallInfo {
  id: string;
  created: number;
  model: string;
  includeUsage: boolean;
  /** How many choices the answer has (`n`). */
  choiceCount: number;
  /** x-ratelimit-* headers for the response. */
  headers: Record<string, string>;
}

export interface ChatCompletionResult extends ChatCallInfo, ChatResult {
  /** What the call cost (or, for a test key, what it would have cost), in credits. */
  costCredits: number;
}

export type ChatStreamItem = { type: 'chunk'; choices: ChoiceDelta[]; stamp?: StreamStamp } | { type: 'finish'; usage: ChatUsage; costCredits: number };

interface PreparedCall {
  info: ChatCallInfo;
  model: ChatModel;
  provider: ChatProvider;
  request: Omit<ChatRequest, 'signal'>;
  promptEstimate: number;
  hold: Hold;
  /** The call's request-log row (its hold carries it to the charge). */
  log?: CallLog;
}

/** What the call allowed: the bounds a provider's usage report is read within. */
function usageBounds(call: PreparedCall): UsageBounds {
  const { maxTokens, n } = call.request;
  return { promptEstimate: call.promptEstimate, maxCompletion: maxTokens * n };
}

/** The prompt and what was relayed, the completion within what the call allowed: what a cut stream owes. */
function relayedUsage(call: PreparedCall, sent: string): ChatUsage {
  return { promptTokens: call.promptEstimate, completionTokens: Math.min(countTokens(sent), usageBounds(call).maxCompletion) };
}

/**
 * Characters a stream may relay per token it allowed (a token is a few characters; 64 is far past
 * any tokenizer). An upstream that writes on past that is cut: 20 MB relayed for max_tokens 60.
 */
const MAX_CHARS_PER_TOKEN = 64;

/** POST /v1/chat/completions (and the Responses API over it): authorise, hold, call, charge the usage. */
export class ChatService {
  constructor(
    private readonly catalog: Catalog,
    private readonly providers: ChatProviders,
    private readonly billing: Billing,
    private readonly limiter: RateLimiter,
    private readonly urls: UrlGuard,
    private readonly tracing: Tracing = NO_TRACING,
  ) {}

  /** The request checked as far as it can be without calling anything: its model, the key's right to it, every field. */
  private read(key: KeyPrincipal, input: unknown, log?: CallLog) {
    const body = parseInput(chatRequestSchema, input);
    const model = this.catalog.require(body.model, 'chat');
    log?.named(model.id);
    assertModelAllowed(key, model.id);
    return { model, call: readChatCall(body, model) };
  }

  /** The prompt-token estimate a call of this request would hold credits for; counted against the chat rate limit, free. */
  async countPromptTokens(key: KeyPrincipal, input: unknown): Promise<number> {
    const { call } = this.read(key, input);
    await enforceRateLimit(this.limiter, key.keyId, 'chat');
    return estimatePromptTokens(call.messages, call.options);
  }

  private async prepare(key: KeyPrincipal, input: unknown, idempotent: IdempotentCall | undefined, log: CallLog | undefined): Promise<PreparedCall> {
    const { model, call } = this.read(key, input, log);
    // Everything that can refuse the call comes before the hold, so a refusal never leaves one.
    await checkImagePartUrls(call.messages, this.urls);
    const provider = this.providers.chat(model, key.mode);
    const id = `chatcmpl-${idempotent?.id ?? randomIdText(12)}`;
    // A retry whose first run was charged is answered, never refused by a limit its first run passed.
    const resumed = await this.billing.resumed(key, idempotent, id, model.id);
    const headers = resumed ? {} : await enforceRateLimit(this.limiter, key.keyId, 'chat');
    const promptEstimate = estimatePromptTokens(call.messages, call.options);
    // Every choice may write up to the limit; the prompt is read once.
    const holdTokens = Math.ceil(promptEstimate * PROMPT_HOLD_MARGIN) + PROMPT_HOLD_EXTRA + call.maxTokens * call.n;
    const hold = resumed ?? (await this.billing.hold(key, chatCostMicro(holdTokens, model.creditsPer10kTokens), model.id, id, log));
    return {
      info: {
        id,
        created: Math.floor(Date.now() / 1000),
        model: model.id,
        includeUsage: call.includeUsage,
        choiceCount: call.n,
        headers,
      },
      model,
      provider,
      request: {
        upstreamModel: model.route.upstreamModel,
        publicModel: model.id,
        messages: call.messages,
        maxTokens: call.maxTokens,
        maxTokensParam: call.maxTokensParam,
        n: call.n,
        options: call.options,
        ...(call.includeObfuscation !== undefined ? { includeObfuscation: call.includeObfuscation } : {}),
      },
      promptEstimate,
      hold,
      log,
    };
  }

  /** Parses the body far enough to tell a streamed call from a plain one. */
  isStream(input: unknown): boolean {
    return typeof input === 'object' && input !== null && (input as { stream?: unknown }).stream === true;
  }

  /** Charges `usage` (a provider's report read through `billableUsage`) against the hold; answers what the balance moved (or would have, for a test key), in credits. */
  private async charge(call: PreparedCall, usage: ChatUsage): Promise<number> {
    call.log?.usedTokens(usage.promptTokens, usage.completionTokens);
    this.tracing.noteCall({ inputTokens: usage.promptTokens, outputTokens: usage.completionTokens });
    const cost = chatCostMicro(usage.promptTokens + usage.completionTokens, call.model.creditsPer10kTokens);
    return microToCredits(await this.billing.settle(call.hold, cost));
  }

  /**
   * `idempotent`, when the request has an Idempotency-Key, names the call (its id and its
   * charge's reference): see IdempotentCall. `log`, the call's request-log row, is filled in and
   * goes with the charge.
   */
  async complete(key: KeyPrincipal, input: unknown, signal?: CallSignal, idempotent?: IdempotentCall, log?: CallLog): Promise<ChatCompletionResult> {
    const call = await this.prepare(key, input, idempotent, log);
    let result: ChatResult;
    try {
      result = await call.provider.complete({ ...call.request, signal });
    } catch (err) {
      await this.billing.settle(call.hold, 0);
      throw err;
    }
    const usage = billableUsage(
      result.usage,
      () => ({ promptTokens: call.promptEstimate, completionTokens: countTokens(textOfChoices(result.choices)) }),
      usageBounds(call),
    );
    const costCredits = await this.charge(call, usage);
    return { ...call.info, choices: result.choices, usage, costCredits, systemFingerprint: result.systemFingerprint, serviceTier: result.serviceTier };
  }

  /**
   * A streamed call. The hold is placed before this resolves (so 402/429 are ordinary HTTP
   * errors); the stream then charges the provider's usage, or, when the client goes away, the
   * prompt plus what was sent. A provider failure before anything was sent charges nothing; one
   * after it charges what was relayed, as a client abort does. A call cut (the client gone, the
   * drain deadline) before the provider's first event charges nothing either.
   */
  async stream(key: KeyPrincipal, input: unknown, signal: CallSignal, log?: CallLog): Promise<{ info: ChatCallInfo; items: AsyncGenerator<ChatStreamItem> }> {
    const call = await this.prepare(key, input, undefined, log);
    return { info: call.info, items: this.run(call, signal) };
  }

  private async *run(call: PreparedCall, signal: CallSignal): AsyncGenerator<ChatStreamItem> {
    let sent = '';
    let settled = false;
    // Past this much relayed text the upstream has run away from the call's max tokens.
    const maxChars = usageBounds(call).maxCompletion * MAX_CHARS_PER_TOKEN + 1024;
    let answering = false;
    try {
      for await (const event of call.provider.stream({ ...call.request, signal })) {
        if (event.type === 'chunk') {
          if (!answering) {
            // The 200 goes out with this first event: from here the call is charged its prompt and
            // what was sent, as a client that leaves is, whatever happens to this instance.
            answering = true;
            this.billing.streaming(call.hold, () => {
              const owed = relayedUsage(call, sent);
              return chatCostMicro(owed.promptTokens + owed.completionTokens, call.model.creditsPer10kTokens);
            });
          }
          sent += textOfDelta(event.choices);
          if (sent.length > maxChars) {
            throw upstreamError('The model provider wrote far past the max tokens of the request; the stream was cut.');
          }
          yield event;
          continue;
        }
        const usage = billableUsage(event.usage, () => relayedUsage(call, sent), usageBounds(call));
        const costCredits = await this.charge(call, usage);
        settled = true;
        yield { type: 'finish', usage, costCredits };
        return;
      }
    } catch (err) {
      // A client that left is the door's to say (it saw the connection close).
      if (!signal.aborted) call.log?.failed(err);
      // The provider never answered (the client left, or the drain deadline cut the call, before
      // its first event: nothing was sent), or it failed before its first word: nothing is charged.
      if (!answering || (!signal.aborted && sent === '')) {
        await this.billing.settle(call.hold, 0);
        settled = true;
      }
      if (signal.aborted) return;
      throw err;
    } finally {
      // The client left, or the provider died after relaying part of the answer: charge the
      // prompt and what was sent.
      if (!settled) await this.charge(call, relayedUsage(call, sent));
    }
  }
}
