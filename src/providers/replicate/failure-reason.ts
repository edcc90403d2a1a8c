/**
 * What a failed prediction's `error` means. Replicate passes on the model's own words (often a
 * Python exception, sometimes with the URL of a signed input), so the caller is only ever told
 * a short reason of ours; the upstream's words, scrubbed, go to the logs as a cause.
 */
import { scrubUpstreamText } from '../shared/upstream-errors';

// Safety checkers say "NSFW content detected"; Replicate's own filter says the input or output
// "was flagged as sensitive". `\bsafety\b` skips parameter names such as disable_safety_checker.
const POLICY = /\bnsfw\b|\bsafety\b|content[\s_-]?polic|flagged as sensitive/i;
const SOURCE = /\b(download|fetch|retrieve|unreachable|expired|url)\b/i;
const TIMED_OUT = /timed?[\s_-]?out|timeout|deadline/i;
const INVALID = /\b(invalid|validation|must be|unsupported|not supported|out of range)\b/i;

export function isPolicyFailure(error: unknown): boolean {
  return POLICY.test(messageOf(error));
}

/** A short reason for a failed video job, as `reason` on retrieve and in the video.failed webhook. */
export function videoFailureReason(error: unknown): string {
  const text = messageOf(error);
  if (POLICY.test(text)) return 'The provider refused the job on content-policy grounds.';
  if (SOURCE.test(text)) return 'The provider could not download a source file (image / video); the link may have expired.';
  if (TIMED_OUT.test(text)) return 'The provider timed out while generating the video.';
  if (INVALID.test(text)) return "The provider rejected the job's input.";
  return 'The video provider failed to generate the video.';
}

/** The upstream's words about a failure, for the logs only: scrubbed of our secrets and any URL. */
export function failureCause(status: string, error: unknown, secrets: string[]): Error {
  const text = scrubUpstreamText(messageOf(error).slice(0, 300), { secrets });
  return new Error(`Replicate prediction ${status}${text ? `: ${text}` : ''}`);
}

function messageOf(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object') {
    const { message, detail } = error as { message?: unknown; detail?: unknown };
    for (const candidate of [message, detail]) if (typeof candidate === 'string') return candidate;
  }
  return '';
}
