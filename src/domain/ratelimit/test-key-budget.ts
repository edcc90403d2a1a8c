/**
 * Test keys are free, not unlimited. Their image work runs on this instance's simulator, so it
 * is bounded here: pixels × n per request, images or edits in flight per key, and test-key
 * image work in flight on the whole instance, so that free traffic leaves the CPU to paid
 * traffic. The counts are per instance (the work is too); Redis is not asked.
 */
import { DomainError, invalidRequest } from '../errors/domain-error';
import { KeyedCounts } from '../shared/keyed-counts';

export interface TestKeyLimits {
  /** Pixels (width × height × n) one request may ask the simulator for. */
  maxPixelsPerRequest: number;
  /** Image generations and edits one test key may have running at once. */
  concurrentPerKey: number;
  /** Test-key generations and edits running at once on this instance, all keys together. */
  concurrentPerInstance: number;
}

/** 2048x2048 once, or 1024x1024 four times. */
export const TEST_KEY_LIMITS: TestKeyLimits = { maxPixelsPerRequest: 2048 * 2048, concurrentPerKey: 2, concurrentPerInstance: 4 };

export class TestKeyBudget {
  private readonly running = new KeyedCounts();

  constructor(readonly limits: TestKeyLimits = TEST_KEY_LIMITS) {}

  /** A 400 naming `n` (retrying the same request would never pass). */
  checkPixels(width: number, height: number, n: number): void {
    const pixels = width * height * n;
    if (pixels > this.limits.maxPixelsPerRequest) {
      throw invalidRequest(
        `Test keys may ask for at most ${this.limits.maxPixelsPerRequest} pixels per request (width x height x n); this one asks for ${pixels}. Lower n or size, or use a live key.`,
        ['n'],
        'test_key_pixel_limit',
      );
    }
  }

  /** Takes a slot for `keyId` or throws 429; the caller runs its work, then calls the release. */
  acquire(keyId: string): () => void {
    const mine = this.running.get(keyId);
    if (mine >= this.limits.concurrentPerKey) {
      throw busy(`This test key already has ${mine} image requests running (at most ${this.limits.concurrentPerKey} at once); retry when one finishes.`);
    }
    if (this.running.total >= this.limits.concurrentPerInstance) {
      throw busy('The simulator is busy with other test-key image work; retry shortly, or use a live key.');
    }
    return this.running.hold(keyId);
  }
}

const busy = (message: string) => new DomainError('rate_limit_exceeded', message, { code: 'test_key_busy', retryAfterSeconds: 1 });
