/**
 * POST /v1/responses for chat models: the request is translated to a chat call and served by
 * ChatService (so it is permitted, limited and billed exactly like chat), and the answer is
 * translated back, whole or as the Responses event stream. Unless `store` is false, the
 * conversation is kept (account-scoped, RESPONSE_RETENTION_DAYS) for `previous_response_id`
 * and `item_reference`.
 */
import type { IdempotentCall } from '../../idempotency/idempotency-service';
import { DomainError, invalidField, invalidRequest, notFound } from '../../errors/domain-error';
import type { FieldPath } from '../../errors/field-path';
import type { KeyPrincipal } from '../../keys/principal';
import { parseInput } from '../../shared/validate';
import type { ChatService } from '../chat-service';
import { completionStatus, newItemId, outputItemsOf, responseObject, type OutputItem, type ResponseFrame } from './response-object';
import { ResponseStreamTranslator, translateStream, type ResponsesEvent } from './response-stream';
import type { ResponseStore, StoredResponse } from './response-store';
import { inputItemsPage, retrieveQuerySchema, withItemIds, type InputItemsPage } from './input-items';
import { responsesRequestSchema, type ResponsesInputItem, type ResponsesRequest } from './responses-request';
import { responsesPath, responsesToChat } from './responses-to-chat';
import type { CallSignal } from '../../shared/call-signal';
import type { CallLog } from '../../requests/call-log';

const responseNotFound = (id: string) => notFound(`No response with id '${id}'.`, 'response_not_found', ['response_id']);

export interface ResponsesResult {
  response: ReturnType<typeof responseObject>;
  costCredits: number;
  headers: Record<string, string>;
}

interface Prepared {
  request: ResponsesRequest;
  frame: ResponseFrame;
  /** The conversation as items: history, then this request's input (references resolved). */
  conversation: ResponsesInputItem[];
  chatBody: Record<string, unknown>;
  origins: FieldPath[];
}

export class ResponsesService {
  constructor(
    private readonly chat: ChatService,
    private readonly store: ResponseStore,
  ) {}

  isStream(input: unknown): boolean {
    return this.chat.isStream(input);
  }

  /** `idempotent`, when the request has an Idempotency-Key, names the chat call under it; `log`, its request-log row (see ChatService.complete). */
  async create(key: KeyPrincipal, input: unknown, signal?: CallSignal, idempotent?: IdempotentCall, log?: CallLog): Promise<ResponsesResult> {
    const p = await this.prepare(key, input);
    const out = await this.inChatTerms(p, () => this.chat.complete(key, p.chatBody, signal, idempotent, log));
    const choice = out.choices[0];
    const output = outputItemsOf(choice);
    const response = responseObject(p.frame, { ...completionStatus(choice.finishReason), output, usage: out.usage });
    await this.keep(key, p, output, response);
    return { response, costCredits: out.costCredits, headers: out.headers };
  }

  /**
   * Resolves once the provider has begun answering, with the first event (402/429, and a provider
   * that fails before answering, come as ordinary errors); the rest of the events follow. `first`
   * is done when the call was cut (the client gone, the drain deadline) before the provider answered.
   */
  async stream(
    key: KeyPrincipal,
    input: unknown,
    signal: CallSignal,
    log?: CallLog,
  ): Promise<{
    headers: Record<string, string>;
    first: IteratorResult<ResponsesEvent>;
    events: AsyncGenerator<ResponsesEvent>;
    translator: ResponseStreamTranslator;
  }> {
    const p = await this.prepare(key, input);
    const { info, items } = await this.inChatTerms(p, () => this.chat.stream(key, p.chatBody, signal, log));
    const translator = new ResponseStreamTranslator(p.frame);
    const events = translateStream(translator, items, (response) => this.keep(key, p, response.output, response));
    const first = await this.inChatTerms(p, () => events.next());
    return { headers: info.headers, first, events, translator };
  }

  async retrieve(key: KeyPrincipal, id: string, query: unknown = {}): Promise<Record<string, unknown>> {
    // What it asks to include is in the stored response already; a parameter OpenAI does not define is a 400.
    parseInput(retrieveQuerySchema, query);
    return (await this.stored(key, id)).response;
  }

  /** The items a stored response was generated from (its conversation before its output), paged as OpenAI pages them. */
  async inputItems(key: KeyPrincipal, id: string, query: unknown): Promise<InputItemsPage> {
    const stored = await this.stored(key, id);
    const outputCount = Array.isArray(stored.response.output) ? stored.response.output.length : 0;
    return inputItemsPage(id, stored.items.slice(0, stored.items.length - outputCount), query);
  }

  /** Only a background response can be cancelled, and this gateway makes none: a stored response is already complete. */
  async cancel(key: KeyPrincipal, id: string): Promise<never> {
    await this.stored(key, id);
    throw invalidRequest(
      'Only responses created with background=true can be cancelled; this one has already finished.',
      ['response_id'],
      'response_not_cancellable',
    );
  }

  /**
   * POST /v1/responses/input_tokens: what the request's input would count as prompt tokens (the
   * same estimate a call holds credits for), free of charge. Counted against the key's chat rate
   * limit, as the call would be: the count reads the whole input.
   */
  async countInputTokens(key: KeyPrincipal, input: unknown): Promise<{ object: 'response.input_tokens'; input_tokens: number }> {
    const p = await this.prepare(key, input);
    const tokens = await this.inChatTerms(p, () => this.chat.countPromptTokens(key, p.chatBody));
    return { object: 'response.input_tokens', input_tokens: tokens };
  }

  async delete(key: KeyPrincipal, id: string): Promise<{ id: string; object: 'response'; deleted: true }> {
    if (!(await this.store.delete(key.accountId, id))) throw responseNotFound(id);
    return { id, object: 'response', deleted: true };
  }

  /** A stored response of the caller's account; another account's, or none, is a 404. */
  private async stored(key: KeyPrincipal, id: string): Promise<StoredResponse> {
    const stored = await this.store.find(key.accountId, id);
    if (!stored) throw responseNotFound(id);
    return stored;
  }

  private async prepare(key: KeyPrincipal, input: unknown): Promise<Prepared> {
    const request = parseInput(responsesRequestSchema, input);
    const history = request.previous_response_id ? await this.history(key, request.previous_response_id) : [];
    const items: ResponsesInputItem[] = typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input;
    const resolved = await this.resolveReferences(key, items);
    checkConversationSize(history, resolved);
    const { body, origins } = responsesToChat(request, history, resolved);
    const frame: ResponseFrame = {
      id: newItemId('resp'),
      createdAt: Math.floor(Date.now() / 1000),
      model: request.model,
      request,
      store: request.store !== false,
    };
    // Every item kept with an id, as OpenAI's are (GET …/input_items lists them by it).
    return { request, frame, conversation: withItemIds([...history, ...resolved]), chatBody: body, origins };
  }

  private async history(key: KeyPrincipal, id: string): Promise<ResponsesInputItem[]> {
    const stored = await this.store.find(key.accountId, id);
    if (!stored) throw notFound(`Previous response with id '${id}' not found.`, 'previous_response_not_found', ['previous_response_id']);
    return stored.items;
  }

  private async resolveReferences(key: KeyPrincipal, items: ResponsesInputItem[]): Promise<ResponsesInputItem[]> {
    const ids = items.flatMap((i) => (i.type === 'item_reference' ? [i.id] : []));
    if (ids.length === 0) return items;
    const found = await this.store.items(key.accountId, ids);
    const referenced = new Set<string>();
    return items.map((item, i) => {
      if (item.type !== 'item_reference') return item;
      // One item once: repeats of one stored item multiplied a small request into a huge conversation.
      if (referenced.has(item.id)) throw invalidField(['input', i, 'id'], `the item '${item.id}' is referenced more than once.`);
      referenced.add(item.id);
      const stored = found.get(item.id);
      if (!stored) throw notFound(`Item with id '${item.id}' not found.`, 'item_not_found', ['input', i, 'id']);
      return stored;
    });
  }

  /** Runs a chat step, naming any field error the way the Responses request wrote it. */
  private async inChatTerms<T>(p: Prepared, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (err) {
      if (!(err instanceof DomainError) || !err.fieldPath) throw err;
      // The field at its Responses path, wherever the message names it: the client never wrote a chat name.
      const path = responsesPath(err.fieldPath, p.origins);
      // The output cap, also where an upstream's own text names it.
      const wording = err.wording.mapText((text) => text.replace(/\bmax_(?:completion_)?tokens\b/g, 'max_output_tokens'));
      if (err.type === 'invalid_request_error') throw invalidRequest(wording, path, err.code);
      throw new DomainError(err.type, wording, { fieldPath: path, code: err.code, headers: err.headers, retryAfterSeconds: err.retryAfterSeconds, cause: err });
    }
  }

  private async keep(key: KeyPrincipal, p: Prepared, output: OutputItem[], response: unknown): Promise<void> {
    if (!p.frame.store) return;
    const outputAsInput = output.map(({ status: _status, ...item }) => item) as unknown as ResponsesInputItem[];
    await this.store.save(key.accountId, p.frame.id, [...p.conversation, ...outputAsInput], output, response);
  }
}

/**
 * A conversation (the previous turns and this input, references expanded) is held to what one chat
 * request may carry (CHAT_BODY_LIMIT): each stored response keeps its whole conversation, so a
 * chain of large turns grew storage quadratically, and a small request could name megabytes.
 */
const MAX_CONVERSATION_CHARS = 25 * 1024 * 1024;

function checkConversationSize(history: readonly ResponsesInputItem[], input: readonly ResponsesInputItem[]): void {
  const size = JSON.stringify(history).length + JSON.stringify(input).length;
  if (size <= MAX_CONVERSATION_CHARS) return;
  const path: FieldPath = history.length > 0 ? ['previous_response_id'] : ['input'];
  throw invalidRequest(
    `The conversation (previous turns and this input) is larger than ${MAX_CONVERSATION_CHARS / (1024 * 1024)} MB; start a new one or send less.`,
    path,
    'context_length_exceeded',
  );
}
