/** The chat-completions wire shapes: the JSON answer, stream chunks and usage, from the domain's results. */
import type { ChatCallInfo, ChatCompletionResult } from '../../domain/chat/chat-service';
import type { ChatUsage, ChoiceDelta, StreamStamp } from '../../domain/chat/chat-port';

export function usageBody(u: ChatUsage) {
  const body: Record<string, unknown> = {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.promptTokens + u.completionTokens,
  };
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
      message: { ...c.message, annotations: c.message.annotations ?? [] },
      logprobs: c.logprobs ?? null,
      finish_reason: c.finishReason,
    })),
    usage: usageBody(out.usage),
    ...(out.serviceTier !== undefined ? { service_tier: out.serviceTier } : {}),
    system_fingerprint: out.systemFingerprint ?? null,
  };
}

const wireChoices = (choices: readonly ChoiceDelta[]) =>
  choices.map((c) => ({ index: c.index, delta: c.delta, logprobs: c.logprobs ?? null, finish_reason: c.finishReason }));

export function chunkBody(info: ChatCallInfo, choices: readonly ChoiceDelta[], stamp: StreamStamp = {}) {
  return {
    id: info.id,
    object: 'chat.completion.chunk',
    created: info.created,
    model: info.model,
    ...(stamp.serviceTier !== undefined ? { service_tier: stamp.serviceTier } : {}),
    system_fingerprint: stamp.systemFingerprint ?? null,
    choices: wireChoices(choices),
  };
}

/**
 * A stream's chunks as JSON text: the fields every chunk of a call repeats are serialised once
 * (`chunkPrefix`), each chunk adds its choices, written field by field rather than through wire
 * objects. The same text `JSON.stringify(chunkBody(…))` gives (about 0.35 µs a content chunk
 * against 1.2 for that, on the bench machine). `stamp` is what the provider's first chunk said
 * (system fingerprint, service tier), repeated on every chunk as OpenAI does.
 */
export function chunkPrefix(info: ChatCallInfo, stamp: StreamStamp = {}): string {
  const tier = stamp.serviceTier !== undefined ? `"service_tier":${JSON.stringify(stamp.serviceTier)},` : '';
  return `{"id":${JSON.stringify(info.id)},"object":"chat.completion.chunk","created":${JSON.stringify(info.created)},"model":${JSON.stringify(info.model)},${tier}"system_fingerprint":${JSON.stringify(stamp.systemFingerprint ?? null)},"choices":`;
}

export function chunkText(prefix: string, choices: readonly ChoiceDelta[]): string {
  let text = `${prefix}[`;
  for (let i = 0; i < choices.length; i++) {
    const c = choices[i];
    text += `${i > 0 ? ',' : ''}{"index":${JSON.stringify(c.index)},"delta":${JSON.stringify(c.delta)},"logprobs":${JSON.stringify(c.logprobs ?? null)},"finish_reason":${JSON.stringify(c.finishReason)}}`;
  }
  return `${text}]}`;
}

export function usageChunkBody(info: ChatCallInfo, usage: ChatUsage, stamp?: StreamStamp) {
  return { ...chunkBody(info, [], stamp), usage: usageBody(usage) };
}
