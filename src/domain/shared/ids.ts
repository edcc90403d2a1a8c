import { randomBytes, randomFillSync } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random base62 text; 256 % 62 bias is removed by rejection so every character is uniform. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/** Prefixed ids from one place, e.g. `acct_…`, `vid_…`. */
export function newId(prefix: string, length = 20): string {
  return `${prefix}_${randomBase62(length)}`;
}

/**
 * Random bytes for identifiers that are not secrets (a call's `chatcmpl-…` id), drawn from a
 * pool refilled 4 KiB at a time, as the uuid package does: one call to the system's generator
 * per few hundred ids instead of one per id. Secrets (keys, webhook secrets) keep their own
 * draw (randomBase62), so no future secret ever sits in this buffer.
 */
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;

/** `bytes` random bytes as base64url text (16 characters for 12 bytes). */
export function randomIdText(bytes: number): string {
  if (bytes > POOL.length) return randomBytes(bytes).toString('base64url');
  if (poolOffset + bytes > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const text = POOL.toString('base64url', poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return text;
}
