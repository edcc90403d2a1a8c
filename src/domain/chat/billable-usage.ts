import type { ChatUsage } from './chat-port';

/**
 * The usage a chat call is charged for. The provider's report is the charge, even above the hold
 * (a prompt our tokenizer under-counts, say), but only a report that could be true:
 *  - not two non-negative finite counts, or zero in all: the call is charged as if the provider
 *    had said nothing (the prompt estimate and the tokens relayed), as for a missing report, so
 *    a negative count cannot make a streamed answer free;
 *  - fractional counts are rounded up;
 *  - completion tokens beyond what the call let the model write (the max tokens sent upstream,
 *    x n; reasoning tokens count inside it, as OpenAI counts them) and prompt tokens beyond four
 *    times the estimate plus 16,384 (images, audio and files, which the estimate weighs roughly,
 *    stay inside that) are cut to those bounds, so an upstream that answers 1e15 tokens cannot
 *    drain an account in one call.
 */
export const PROMPT_BOUND_FACTOR = 4;
export const PROMPT_BOUND_SLACK = 16_384;

export interface UsageBounds {
  promptEstimate: number;
  /** Completion tokens the call allowed in all: the max tokens sent upstream x n. */
  maxCompletion: number;
}

const isCount = (n: number) => Number.isFinite(n) && n >= 0;

export function billableUsage(reported: ChatUsage | undefined, fallback: () => ChatUsage, bounds: UsageBounds): ChatUsage {
  if (!reported || !isCount(reported.promptTokens) || !isCount(reported.completionTokens) || reported.promptTokens + reported.completionTokens === 0) {
    // What was relayed, within what the call allowed: an upstream that writes on past its max
    // tokens is not the client's bill (20 MB relayed for max_tokens 60 cost 64 credits).
    const estimate = fallback();
    return estimate.completionTokens > bounds.maxCompletion ? { ...estimate, completionTokens: bounds.maxCompletion } : estimate;
  }
  const maxPrompt = bounds.promptEstimate * PROMPT_BOUND_FACTOR + PROMPT_BOUND_SLACK;
  const promptTokens = Math.min(Math.ceil(reported.promptTokens), maxPrompt);
  const completionTokens = Math.min(Math.ceil(reported.completionTokens), bounds.maxCompletion);
  if (promptTokens === reported.promptTokens && completionTokens === reported.completionTokens) return reported;
  // A corrected report: its details (cached, reasoning tokens) no longer add up, so they go.
  return { promptTokens, completionTokens };
}
