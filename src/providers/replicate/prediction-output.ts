/**
 * Reading a finished prediction's `output` and a running one's `logs`. Image models answer a
 * list of file URLs (some a single URL); video models a single URL (some a list of one). In
 * sync mode an output may come inline as a data: URI, decoded here rather than fetched.
 */
import type { GeneratedImage } from '../ports';
import type { FetchMedia } from '../shared/fetch-media';

export function outputUrls(output: unknown): string[] {
  const items = Array.isArray(output) ? output : [output];
  return items.filter((item): item is string => typeof item === 'string' && item.length > 0);
}

export async function downloadOutput(url: string, fetchMedia: FetchMedia): Promise<GeneratedImage> {
  const inline = /^data:([\w.+-]+\/[\w.+-]+)?(;[^,]*)?,/i.exec(url);
  if (!inline) return fetchMedia(url);
  const payload = url.slice(inline[0].length);
  const data = /;base64/i.test(inline[2] ?? '') ? Buffer.from(payload, 'base64') : Buffer.from(decodeURIComponent(payload));
  if (data.length === 0) throw new Error('Empty data: URI in the prediction output');
  return { data, contentType: inline[1] ?? 'application/octet-stream' };
}

/** Only the tail of the logs matters, and a long log should not cost a long scan. */
const LOG_TAIL_CHARS = 4096;

/**
 * The last progress bar a model printed (tqdm's ` 45%|████▌     | 9/20`), as a percentage 0..100;
 * undefined when the logs show none.
 */
export function progressFromLogs(logs: unknown): number | undefined {
  if (typeof logs !== 'string') return undefined;
  let last: string | undefined;
  for (const match of logs.slice(-LOG_TAIL_CHARS).matchAll(/(\d{1,3})%\|/g)) last = match[1];
  if (last === undefined) return undefined;
  return Math.min(100, Number(last));
}
