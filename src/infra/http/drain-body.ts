import type { Readable } from 'node:stream';

/**
 * Reads a response body only to let the exchange finish politely, then throws it away: stops at
 * `maxBytes` or after `windowMs`, whichever comes first, and never fails (a receiver that sends
 * 5 MB, trickles its body or drops the connection after the status line has still answered).
 * The stream is destroyed when reading stops early, so the connection is not reused.
 */
export async function drainBriefly(body: Readable, maxBytes: number, windowMs: number): Promise<void> {
  let received = 0;
  let timer: NodeJS.Timeout | undefined;
  const reading = (async () => {
    for await (const chunk of body) {
      received += (chunk as Buffer).length;
      if (received >= maxBytes) return false;
    }
    return true;
  })().catch(() => false);
  const finished = await Promise.race([reading, new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), windowMs)))]);
  clearTimeout(timer);
  if (!finished) body.destroy();
}
