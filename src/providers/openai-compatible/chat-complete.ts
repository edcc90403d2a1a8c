/** Non-streaming chat: one POST /chat/completions, one JSON answer. */
import { upstreamError } from '../../domain/errors/domain-error';
import type { ChatRequest, ChatResult } from '../ports';
import { chatPayload, finishReasonOf, usageOf } from './chat-payload';
import type { UpstreamHttp } from './upstream-http';

interface CompletionResponse {
  choices?: Array<{ message?: { content?: unknown }; finish_reason?: unknown }>;
  usage?: unknown;
}

export async function completeChat(http: UpstreamHttp, request: ChatRequest): Promise<ChatResult> {
  return resultFromCompletion(await http.postJson('/chat/completions', chatPayload(request, false), request.signal));
}

/** Maps a `chat.completion` object; also used for servers that answer a stream request in JSON. */
export function resultFromCompletion(body: unknown): ChatResult {
  const response = body as CompletionResponse | null;
  const choice = response?.choices?.[0];
  if (!choice || typeof choice !== 'object') {
    throw upstreamError(undefined, new Error('Upstream chat completion has no choices'));
  }
  const content = choice.message?.content;
  return {
    // `null` content is legal (e.g. a refusal or a tool call); to our callers it is empty text.
    content: typeof content === 'string' ? content : '',
    finishReason: finishReasonOf(choice.finish_reason),
    // A compatible server that omits usage reports nothing; the caller decides how to bill that.
    usage: usageOf(response?.usage) ?? { promptTokens: 0, completionTokens: 0 },
  };
}
