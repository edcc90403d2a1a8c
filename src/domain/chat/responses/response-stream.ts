/**
 * Chat stream chunks as the Responses API event sequence: response.created, in_progress, then
 * per output item `output_item.added` … text or argument deltas … `.done` events, and finally
 * response.completed (or .incomplete) carrying the whole response with usage. Every event has
 * its `sequence_number`. Only the first choice is read (Responses has one).
 */
import type { ChatStreamItem } from '../chat-service';
import type { ChatUsage, ChoiceDelta, FinishReason } from '../chat-port';
import {
  completionStatus,
  functionCallItem,
  messageItem,
  newItemId,
  outputTextPart,
  responseObject,
  responsesLogprobs,
  type OutputItem,
  type ResponseFrame,
} from './response-object';

export interface ResponsesEvent {
  type: string;
  [field: string]: unknown;
}

interface OpenMessage {
  kind: 'message';
  id: string;
  index: number;
  part: 'output_text' | 'refusal';
  text: string;
  logprobs: unknown[];
}

interface OpenCall {
  kind: 'call';
  id: string;
  index: number;
  callId: string;
  name: string;
  args: string;
}

/** A message's content part: its text, or its refusal. */
function contentPart(kind: OpenMessage['part'], text: string, logprobs: unknown[]) {
  return kind === 'output_text' ? outputTextPart(text, logprobs) : { type: 'refusal', refusal: text };
}

export class ResponseStreamTranslator {
  private sequence = 0;
  private readonly output: OutputItem[] = [];
  private open: OpenMessage | undefined;
  private readonly calls = new Map<number, OpenCall>();
  private finishReason: FinishReason | null = null;

  constructor(private readonly frame: ResponseFrame) {}

  private event(type: string, fields: Record<string, unknown>): ResponsesEvent {
    return { type, sequence_number: this.sequence++, ...fields };
  }

  /** Whether the answer has its finish reason: what follows is its end, after the charge. */
  get finished(): boolean {
    return this.finishReason !== null;
  }

  start(): ResponsesEvent[] {
    const response = responseObject(this.frame, { status: 'in_progress', output: [] });
    return [this.event('response.created', { response }), this.event('response.in_progress', { response })];
  }

  chunk(choices: readonly ChoiceDelta[]): ResponsesEvent[] {
    const events: ResponsesEvent[] = [];
    const choice = choices.find((c) => c.index === 0);
    if (!choice) return events;
    const { content, refusal, tool_calls: calls } = choice.delta;
    if (content) events.push(...this.text('output_text', content, responsesLogprobs(choice.logprobs)));
    if (refusal) events.push(...this.text('refusal', refusal, []));
    for (const call of calls ?? []) events.push(...this.toolCall(call.index, call.id, call.function?.name, call.function?.arguments));
    if (choice.finishReason) this.finishReason = choice.finishReason;
    return events;
  }

  /** The end of the answer: every open item done, then the terminal response event. */
  finish(usage: ChatUsage): { events: ResponsesEvent[]; response: ReturnType<typeof responseObject> } {
    const events = this.closeMessage();
    for (const call of this.calls.values()) events.push(...this.closeCall(call));
    this.calls.clear();
    const end = completionStatus(this.finishReason);
    const response = responseObject(this.frame, { ...end, output: this.output, usage });
    events.push(this.event(end.status === 'completed' ? 'response.completed' : 'response.incomplete', { response }));
    return { events, response };
  }

  /**
   * A failure after the stream started, as OpenAI ends such a stream: `response.failed`, whose
   * response has status `failed`, an `error` ({ code, message }; a rate limit reads
   * `rate_limit_exceeded`, anything else `server_error`) and the output relayed so far, its open
   * items `incomplete`. It is the stream's last event.
   */
  failed(type: string, message: string): ResponsesEvent {
    const output = this.output.slice();
    const m = this.open;
    if (m) {
      output[m.index] = messageItem(m.id, [contentPart(m.part, m.text, m.logprobs)], 'incomplete');
    }
    for (const call of this.calls.values()) output[call.index] = functionCallItem(call.id, call.callId, call.name, call.args, 'incomplete');
    const code = type === 'rate_limit_exceeded' ? 'rate_limit_exceeded' : 'server_error';
    return this.event('response.failed', { response: responseObject(this.frame, { status: 'failed', output, error: { code, message } }) });
  }

  /**
   * An error after the stream started. OpenAI's `error` event (code, message, param), plus the
   * error object itself: the SDKs raise a data payload carrying `error` as an APIError, so the
   * application sees a failure rather than an event it might not handle.
   */
  error(type: string, message: string, param: string | null, code: string | null): ResponsesEvent {
    return this.event('error', { code: code ?? type, message, param, error: { type, code, message, param } });
  }

  private text(part: 'output_text' | 'refusal', delta: string, logprobs: unknown[]): ResponsesEvent[] {
    const events: ResponsesEvent[] = [];
    if (this.open && this.open.part !== part) events.push(...this.closeMessage());
    if (!this.open) {
      const id = newItemId('msg');
      this.open = { kind: 'message', id, index: this.output.length, part, text: '', logprobs: [] };
      this.output.push(messageItem(id, [], 'in_progress'));
      events.push(this.event('response.output_item.added', { output_index: this.open.index, item: messageItem(id, [], 'in_progress') }));
      events.push(this.event('response.content_part.added', { item_id: id, output_index: this.open.index, content_index: 0, part: contentPart(part, '', []) }));
    }
    this.open.text += delta;
    this.open.logprobs.push(...logprobs);
    const base = { item_id: this.open.id, output_index: this.open.index, content_index: 0, delta };
    events.push(part === 'output_text' ? this.event('response.output_text.delta', { ...base, logprobs }) : this.event('response.refusal.delta', base));
    return events;
  }

  private closeMessage(): ResponsesEvent[] {
    const m = this.open;
    if (!m) return [];
    this.open = undefined;
    const part = contentPart(m.part, m.text, m.logprobs);
    const where = { item_id: m.id, output_index: m.index, content_index: 0 };
    const status = this.finishReason === 'length' ? 'incomplete' : 'completed';
    const item = messageItem(m.id, [part], status);
    this.output[m.index] = item;
    return [
      m.part === 'output_text'
        ? this.event('response.output_text.done', { ...where, text: m.text, logprobs: m.logprobs })
        : this.event('response.refusal.done', { ...where, refusal: m.text }),
      this.event('response.content_part.done', { ...where, part }),
      this.event('response.output_item.done', { output_index: m.index, item }),
    ];
  }

  private toolCall(toolIndex: number, callId: string | undefined, name: string | undefined, args: string | undefined): ResponsesEvent[] {
    const events: ResponsesEvent[] = [];
    let call = this.calls.get(toolIndex);
    if (!call) {
      events.push(...this.closeMessage());
      const id = newItemId('fc');
      call = { kind: 'call', id, index: this.output.length, callId: callId ?? id, name: name ?? '', args: '' };
      this.calls.set(toolIndex, call);
      const item = functionCallItem(id, call.callId, call.name, '', 'in_progress');
      this.output.push(item);
      events.push(this.event('response.output_item.added', { output_index: call.index, item }));
    } else if (name) call.name += name;
    if (args) {
      call.args += args;
      events.push(this.event('response.function_call_arguments.delta', { item_id: call.id, output_index: call.index, delta: args }));
    }
    return events;
  }

  private closeCall(call: OpenCall): ResponsesEvent[] {
    const item = functionCallItem(call.id, call.callId, call.name, call.args, 'completed');
    this.output[call.index] = item;
    return [
      this.event('response.function_call_arguments.done', { item_id: call.id, output_index: call.index, name: call.name, arguments: call.args }),
      this.event('response.output_item.done', { output_index: call.index, item }),
    ];
  }
}

/**
 * Runs a chat stream through the translator. Its opening events wait for the provider's first
 * event, as a chat stream's first chunk does: a provider that fails before answering makes this
 * throw before yielding anything, so the route answers an ordinary HTTP error (a 400 the provider
 * refused, a 502 with Retry-After) instead of a 200 stream that ends in `response.failed`
 * (LangChain read that as an empty answer; the AI SDK retried a 400 three times). A stream cut
 * before the provider's first event (the client gone, the drain deadline) yields nothing.
 */
export async function* translateStream(
  translator: ResponseStreamTranslator,
  items: AsyncGenerator<ChatStreamItem>,
  onFinish: (response: ReturnType<typeof responseObject>, costCredits: number) => Promise<void>,
): AsyncGenerator<ResponsesEvent> {
  let next = await items.next();
  if (next.done) return;
  yield* translator.start();
  try {
    for (; !next.done; next = await items.next()) {
      const item = next.value;
      if (item.type === 'chunk') {
        yield* translator.chunk(item.choices);
        continue;
      }
      const { events, response } = translator.finish(item.usage);
      await onFinish(response, item.costCredits);
      yield* events;
    }
  } finally {
    // Stopped early (the client left): the chat stream settles what it sent.
    if (!next.done) await items.return(undefined);
  }
}
