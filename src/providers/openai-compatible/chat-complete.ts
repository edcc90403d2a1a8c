/** Non-streaming chat: one POST /chat/completions, one JSON answer. */
import { upstreamError } from '../../domain/errors/domain-error';
import type { ChatChoice, ChatRequest, ChatResult } from '../ports';
import { chatPayload, finishReasonOf, logprobsOf, toolCallsOf, usageOf } from './chat-payload';
import type { UpstreamHttp } from './upstream-http';

interface CompletionChoice {
  index?: unknown;
  message?: { content?: unknown; refusal?: unknown; tool_calls?: unknown; annotations?: unknown };
  finish_reason?: unknown;
  logprobs?: unknown;
}

export async function completeChat(http: UpstreamHttp, request: ChatRequest): Promise<ChatResult> {
  return resultFromCompletion(await http.postJson('/chat/completions', chatPayload(request, false), request.signal, request));
}

/** Maps a `chat.completion` object; also used for servers that answer a stream request in JSON. */
export function resultFromCompletion(body: unknown): ChatResult {
  const response = body as { choices?: unknown; usage?: unknown; system_fingerprint?: unknown; service_tier?: unknown } | null;
  const choices = Array.isArray(response?.choices) ? (response.choices as CompletionChoice[]) : [];
  if (choices.length === 0 || choices.some((c) => !c || typeof c !== 'object')) {
    throw upstreamError(undefined, new Error('Upstream chat completion has no choices'));
  }
  return {
    choices: choices.map((c, i): ChatChoice => {
      const message: ChatChoice['message'] = {
        role: 'assistant',
        // `null` content is legal (a refusal or a tool call).
        content: typeof c.message?.content === 'string' ? c.message.content : null,
        refusal: typeof c.message?.refusal === 'string' ? c.message.refusal : null,
      };
      const toolCalls = toolCallsOf(c.message?.tool_calls);
      if (toolCalls) message.tool_calls = toolCalls;
      const annotations = c.message?.annotations;
      if (Array.isArray(annotations) && annotations.length > 0 && annotations.every((a) => a !== null && typeof a === 'object'))
        message.annotations = annotations;
      return { index: typeof c.index === 'number' ? c.index : i, message, finishReason: finishReasonOf(c.finish_reason), logprobs: logprobsOf(c.logprobs) };
    }),
    // A compatible server that omits usage reports nothing; the caller decides how to bill that.
    usage: usageOf(response?.usage) ?? { promptTokens: 0, completionTokens: 0 },
    ...(typeof response?.system_fingerprint === 'string' ? { systemFingerprint: response.system_fingerprint } : {}),
    ...(typeof response?.service_tier === 'string' ? { serviceTier: response.service_tier } : {}),
  };
}
