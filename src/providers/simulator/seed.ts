/**
 * Seeding for the simulator. Everything it makes is a pure function of the request, so a test
 * key gives the same answer every time and `seed` really reproduces an output.
 */
import { createHash } from 'node:crypto';

/**
 * 32-bit FNV-1a over UTF-16 code units, for the chat hot path: no allocation and no
 * encoding step, unlike a crypto hash over a joined string. Chain calls to fold several parts.
 */
export function fnv1a(text: string, hash = 0x811c9dc5): number {
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Folds a number into an FNV-1a hash (a separator first, so ["ab","c"] and ["a","bc"] differ). */
export function fnv1aNumber(value: number, hash: number): number {
  return fnv1a(String(value), fnv1a('\u0000', hash));
}

/**
 * 128 bits of seed from SHA-256 over the parts. Used for media, where the parts include
 * user-controlled strings and the cost of hashing is nothing next to making the file.
 * Parts are length-prefixed so no two different part lists hash alike.
 */
export function seedFromParts(parts: readonly (string | number | boolean | Buffer | undefined | null)[]): Uint32Array {
  const hash = createHash('sha256');
  for (const part of parts) {
    if (Buffer.isBuffer(part)) {
      hash.update(`bytes${part.length}:`);
      hash.update(part);
      continue;
    }
    const text = part === undefined || part === null ? '\u0000' : `${typeof part}:${String(part)}`;
    hash.update(`${text.length}:${text};`);
  }
  const digest = hash.digest();
  return new Uint32Array([digest.readUInt32LE(0), digest.readUInt32LE(4), digest.readUInt32LE(8), digest.readUInt32LE(12)]);
}

/** Short hex id derived from a string (queue ids). */
export function shortHash(text: string, hexChars = 24): string {
  return createHash('sha256').update(text).digest('hex').slice(0, hexChars);
}

/** A small seeded PRNG (sfc32): fast, good enough for colours and word choice, never for secrets. */
export interface Prng {
  /** Uniform 32-bit unsigned integer. */
  nextUint32(): number;
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [0, bound). */
  int(bound: number): number;
}

export function createPrng(seed: ArrayLike<number>): Prng {
  let a = seed[0] >>> 0;
  let b = (seed.length > 1 ? seed[1] : 0x9e3779b9) >>> 0;
  let c = (seed.length > 2 ? seed[2] : 0x243f6a88) >>> 0;
  let d = (seed.length > 3 ? seed[3] : 0xb7e15162) >>> 0;
  const nextUint32 = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  // Warm up so that nearby seeds (FNV values differing in a few bits) diverge.
  for (let i = 0; i < 12; i++) nextUint32();
  return {
    nextUint32,
    next: () => nextUint32() / 4294967296,
    int: (bound: number) => Math.floor((nextUint32() / 4294967296) * bound),
  };
}

/** Bytes hashed between two yields to the event loop: about 2 ms of SHA-256. */
const SLICE_BYTES = 1024 * 1024;

/**
 * SHA-256 of a large buffer in 1 MB slices with a yield between them, so an 11 MB upload costs
 * the event loop many 2 ms steps instead of one 25 ms block. (WebCrypto's digest is no help:
 * on Node 20 it blocks for as long as the hash before going to the thread pool.)
 */
export async function digestInSlices(data: Buffer): Promise<Buffer> {
  const hash = createHash('sha256');
  for (let at = 0; at < data.length; at += SLICE_BYTES) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve));
    hash.update(data.subarray(at, at + SLICE_BYTES));
  }
  return hash.digest();
}
