/**
 * Short, human reasons for a failed video job. They end up in `reason` on retrieve and in the
 * `video.failed` webhook, so they must never carry upstream internals: no URLs (signed links
 * carry tokens), no file paths or addresses, no stack traces, nothing long.
 */

const MAX_DETAIL = 160;

/** A reason from the `error` of a FAILED status, cleaned for the caller's eyes. */
export function reasonFromUpstreamError(error: unknown): string {
  const detail = sanitize(messageOf(error));
  return detail ? `The provider could not generate the video: ${detail}` : 'The provider could not generate the video.';
}

/** A reason for a 4xx answer to the result request. */
export function reasonFromRejectedResult(status: number, bodyText: string): string {
  if (/content[\s_-]?policy|safety|nsfw/i.test(bodyText)) return 'The provider refused the job on content-policy grounds.';
  if (status === 410 || /\b(url|download|fetch|expired)/i.test(bodyText)) {
    return 'The provider could not download a source file (image_url / video_url); the link may have expired.';
  }
  return 'The provider rejected the job.';
}

function messageOf(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object') {
    const { message, msg, detail } = error as { message?: unknown; msg?: unknown; detail?: unknown };
    for (const candidate of [message, msg, detail]) if (typeof candidate === 'string') return candidate;
  }
  return '';
}

function sanitize(text: string): string {
  const clean = text
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '[url]')
    // The provider's own file paths and addresses (a worker's `/opt/fal/worker.py`, `C:\svc\x`,
    // `10.0.0.5:8080`) say how it is built, nothing the caller can act on.
    .replace(/(^|[\s("'=])(?:\/[\w.@~+-]+){2,}\/?/g, '$1[path]')
    .replace(/\b[a-z]:\\\S+/gi, '[path]')
    .replace(/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g, '[address]')
    .replace(/\[[0-9a-f:.]*:[0-9a-f:.]*\](?::\d+)?|\b[0-9a-f]{0,4}(?::[0-9a-f]{0,4})*::[0-9a-f:]*\b/gi, '[address]')
    // Host names of the provider's own network, and anything shaped like a key or token.
    .replace(/\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:internal|local|lan|corp|intra|svc|cluster\.local)\b(?::\d+)?/gi, '[host]')
    .replace(/\b(?:sk|pk|rk|key|fal|hf|gsk|xai|tok|token)[-_][A-Za-z0-9_-]{8,}/gi, '[redacted]')
    .replace(/\s+/g, ' ')
    .trim();
  return clean.length > MAX_DETAIL ? `${clean.slice(0, MAX_DETAIL - 1)}…` : clean;
}
