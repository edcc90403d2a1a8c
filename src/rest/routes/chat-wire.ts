/** The chat-completions wire shapes: the JSON answer, stream chunks and usage, from the domain's results. */
import type { ChatCallInfo, ChatCompletionResult } from '../../domain/chat/chat-service';
import type { ChatUsage, ChoiceDelta } from '../../domain/chat/chat-port';

export function usageBody(u: ChatUsage) {
  const body: Record<string, unknown> = { prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.promptTokens + u.completionTokens };
  if (u.promptDetails) body.prompt_tokens_details = u.promptDetails;
  if (u.completionDetails) body.completion_tokens_details = u.completionDetails;
  return body;
}

export function completionBody(out: ChatCompletionResult) {
  return {
    id: out.id,
    object: 'chat.completion',
    created: out.created,
    model: out.model,
    choices: out.choices.map((c) => ({
      index: c.index,
      message: { ...c.message, annotations: [] },
      logprobs: c.logprobs ?? null,
      finish_reason: c.finishReason,
    })),
    usage: usageBody(out.usage),
    system_fingerprint: null,
  };
}

export function chunkBody(info: ChatCallInfo, choices: readonly ChoiceDelta[]) {
  return {
    id: info.id,
    object: 'chat.completion.chunk',
    created: info.created,
    model: info.model,
    system_fingerprint: null,
    choices: choices.map((c) => ({ index: c.index, delta: c.delta, logprobs: c.logprobs ?? null, finish_reason: c.finishReason })),
  };
}

export function usageChunkBody(info: ChatCallInfo, usage: ChatUsage) {
  return { ...chunkBody(info, []), usage: usageBody(usage) };
}
