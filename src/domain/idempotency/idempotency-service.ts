import { createHash } from 'node:crypto';
import { DomainError, databaseTooSlow, invalidField } from '../errors/domain-error';
import { asWritten } from '../errors/field-path';
import { DATABASE_ANSWER_DEADLINE_MS, withinDeadline } from '../shared/deadline';
import { randomBase62 } from '../shared/ids';
import { stableJson } from './stable-json';
import { fromStored, storedError, type StoredError } from './stored-error';
import type { IdempotencyRepository } from './idempotency-repository';
import { ABANDONED_AFTER_SECONDS, HeldClaims } from './held-claims';
import type { Clock } from '../ports/clock';
import { systemClock } from '../shared/system-clock';

export { ABANDONED_AFTER_SECONDS, RETRY_UNWRITTEN_MS } from './held-claims';

/** The response a first request produced, as a retry replays it. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * The call an Idempotency-Key claim names. `id` makes the call's ids (`chatcmpl-…`, `img_…`,
 * `vid_…`) and its charge's reference. `resumed` says the claim was held before by a run that
 * did not leave an answer (its instance died, or it was refused): that run may have committed
 * work under the same id, which the services look for before they admit the call again.
 */
export interface IdempotentCall {
  id: string;
  resumed: boolean;
}

export type IdempotencyStart =
  /** The key is new, expired, released, or its first request died with its instance: run the request, then `complete` or `abandon` it. */
  | { kind: 'run'; call: IdempotentCall }
  /** The same request already ran: answer what it answered. */
  | { kind: 'replay'; response: StoredResponse };

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** How long a key is remembered. */
export const KEEP_SECONDS = 24 * 60 * 60;
/**
 * Whether a first request's answer is kept for its retries. A 5xx is not (nothing was charged
 * for it, so a retry may run the request again), nor a 429 (a rate limit or the daily cap) or a
 * 402 (the balance did not cover it): each says "not now", nothing was charged, and a retry
 * after the wait or a top-up must run, not be told the same for 24 hours (a stored 402 kept a
 * paying client from its own request after it bought credits). Other 4xx (a bad field, a
 * forbidden model) are answers about the request itself, replayed as Stripe replays them.
 */
export const isReplayable = (status: number): boolean => status < 500 && status !== 429 && status !== 402;

/** What a duplicate that arrives while the first request runs is told to wait. */
export const RETRY_AFTER_SECONDS = 1;

const PRINTABLE = /^[\x20-\x7e]{1,255}$/;
/** A call id's length: base62, as job ids are (`vid_` + 20), which cursors and paths accept. */
const CALL_ID_LENGTH = 20;

/** What a response holds in memory while it waits for the database, as the store keeps it: its body as base64 text. */
const storedBytes = (response: StoredResponse) => Math.ceil(response.body.length / 3) * 4;

/**
 * Idempotency keys (Stripe's model), scoped to the API key and kept 24 hours. The first request
 * with a key claims it (a row with its request fingerprint and no response yet); its response is
 * stored before it is sent, so a retry whose first answer was lost in transit gets the same
 * status, headers and body and nothing runs or is charged again. A 5xx, a 402 or a 429 is not
 * stored: the claim is released with its call id, so a retry runs the request again as the same
 * call, and work a run committed under that id is answered, never made twice.
 */
export class IdempotencyService {
  private lastPurge = -Infinity;
  /** This instance's claims, heartbeated while their requests run and their writes wait (held-claims.ts). */
  private readonly held: HeldClaims;
  private readonly instanceId: string;
  private readonly graceSeconds: number;
  private readonly clock: Clock;

  constructor(
    private readonly claims: IdempotencyRepository,
    /** `clock`: what the heartbeats, deadlines and retries are timed on (the system's by default). */
    options: { instanceId: string; graceSeconds: number; onDropped?: (count: number) => void; clock?: Clock },
  ) {
    this.instanceId = options.instanceId;
    this.graceSeconds = options.graceSeconds;
    this.clock = options.clock ?? systemClock;
    this.held = new HeldClaims(claims, options.instanceId, options.graceSeconds, options.onDropped ?? (() => undefined), this.clock);
  }

  /** The key checked: 1–255 printable ASCII characters; a refusal names it `name` (the header, or GraphQL's argument). */
  static parseKey(raw: string | undefined, name: string = IDEMPOTENCY_HEADER): string | undefined {
    if (raw === undefined) return undefined;
    if (!PRINTABLE.test(raw)) throw invalidField([asWritten(name)], 'must be 1 to 255 printable ASCII characters.');
    return raw;
  }

  /**
   * What makes two requests the same request, hashed (SHA-256): the door (`POST` for REST,
   * `graphql`), the operation (the path, or the mutation's name) and the body: a JSON body in a
   * stable key order, or the raw bytes (a multipart body without its boundary). One rule for both
   * doors, so a retry is recognised whichever way it came.
   */
  static fingerprint(door: 'POST' | 'graphql', operation: string, body: unknown): string {
    const h = createHash('sha256');
    for (const p of [door, operation, Buffer.isBuffer(body) ? body : stableJson(body)]) h.update(typeof p === 'string' ? Buffer.from(p) : p).update('\0');
    return h.digest('hex');
  }

  async start(apiKeyId: string, key: string, fingerprint: string): Promise<IdempotencyStart> {
    // Housekeeping, not on the request's way (a stalled database would hold the request on it).
    void this.purgeNowAndThen();
    // Claims a new key, or takes over one that expired or whose first request died with its instance.
    // A dead instance's claim is taken over only by the same request, and keeps its call id:
    // the dead one may have committed the call's charge before it could store the response.
    // A released claim (its run was refused, or failed) is taken at once by the same request, as the same call.
    const proposed = randomBase62(CALL_ID_LENGTH);
    const claim = this.claims.claim({
      apiKeyId,
      key,
      fingerprint,
      holder: this.instanceId,
      proposedCallId: proposed,
      keepSeconds: KEEP_SECONDS,
      abandonedAfterSeconds: ABANDONED_AFTER_SECONDS,
      graceSeconds: this.graceSeconds,
    });
    const claimed = await withinDeadline(claim, DATABASE_ANSWER_DEADLINE_MS, databaseTooSlow, this.clock).catch((err: unknown) => {
      // Past the deadline (a stalled database): the caller gets a 503 now, and a claim that lands
      // when the database wakes is freed at once, as a 5xx frees it, so the retry runs instead of
      // meeting a 409. (A claim that failed outright has nothing to free.)
      void claim.then((callId) => (callId !== undefined ? this.abandon(apiKeyId, key) : undefined)).catch(() => undefined);
      throw err;
    });
    if (claimed !== undefined) {
      this.held.hold(apiKeyId, key);
      return { kind: 'run', call: { id: claimed, resumed: claimed !== proposed } };
    }
    const row = await withinDeadline(this.claims.find({ apiKeyId, key }), DATABASE_ANSWER_DEADLINE_MS, databaseTooSlow, this.clock);
    // Gone in between (purged past its 24 hours): claim it again.
    if (!row) return this.start(apiKeyId, key, fingerprint);
    if (row.fingerprint !== fingerprint) {
      throw new DomainError('idempotency_error', `This ${IDEMPOTENCY_HEADER} was already used with a different request.`, {
        fieldPath: [asWritten(IDEMPOTENCY_HEADER)],
        code: 'idempotency_key_reused',
      });
    }
    if (row.response === null) {
      throw new DomainError('idempotency_error', `A request with this ${IDEMPOTENCY_HEADER} is still running; retry after it finishes.`, {
        fieldPath: [asWritten(IDEMPOTENCY_HEADER)],
        code: 'idempotency_key_in_use',
        retryAfterSeconds: RETRY_AFTER_SECONDS,
      });
    }
    return { kind: 'replay', response: row.response };
  }

  /**
   * Runs `work` once per key for callers without an HTTP response to capture (GraphQL): the
   * outcome is stored as JSON (`encode`), a repeat gets it back through `decode`; a 4xx
   * DomainError is stored and thrown again on a repeat (but not a 402 or a 429: isReplayable), anything else releases the key.
   */
  async once<T>(
    apiKeyId: string,
    key: string,
    fingerprint: string,
    work: (call: IdempotentCall) => Promise<T>,
    codec: { encode(r: T): unknown; decode(stored: unknown): Promise<T> },
  ): Promise<T> {
    const start = await this.start(apiKeyId, key, fingerprint);
    if (start.kind === 'replay') {
      const stored = JSON.parse(start.response.body.toString('utf8')) as { error: StoredError };
      if (start.response.status >= 400) throw fromStored(stored.error);
      return codec.decode(stored);
    }
    let result: T;
    try {
      result = await work(start.call);
    } catch (err) {
      if (err instanceof DomainError && isReplayable(err.status)) {
        const error = storedError(err);
        await this.complete(apiKeyId, key, { status: err.status, headers: {}, body: Buffer.from(JSON.stringify({ error })) });
      } else await this.abandon(apiKeyId, key).catch(() => undefined);
      throw err;
    }
    await this.complete(apiKeyId, key, { status: 200, headers: {}, body: Buffer.from(JSON.stringify(codec.encode(result))) });
    return result;
  }

  /**
   * Stores the first request's response (before it is sent); a 5xx, a 429 or a 402 releases the key instead (isReplayable). When
   * the database does not take it, this throws, and it is tried again every RETRY_UNWRITTEN_MS.
   */
  async complete(apiKeyId: string, key: string, response: StoredResponse): Promise<void> {
    if (!isReplayable(response.status)) return this.abandon(apiKeyId, key);
    // Only this instance's claim: one another instance took over (this one looked dead) is its to answer.
    await this.held.persist(apiKeyId, key, storedBytes(response), () => this.claims.storeResponse({ apiKeyId, key }, this.instanceId, response));
  }

  /**
   * Releases a key whose run produced no answer a retry should see (tried again, as `complete`):
   * the next request with the same body runs at once, as the same call, so whatever this run or
   * one before it committed under the call id (a job, a charge) is found, not made again.
   */
  async abandon(apiKeyId: string, key: string): Promise<void> {
    await this.held.persist(apiKeyId, key, 0, () => this.claims.release({ apiKeyId, key }, this.instanceId));
  }

  /** Shutdown: no more heartbeats (an instance that stops has answered or released its claims, or keeps them in memory no longer). */
  stop(): void {
    this.held.stop();
  }

  /** Keys whose response or release waits for the database. */
  get unwrittenCount(): number {
    return this.held.unwrittenCount;
  }

  /** Expired keys are deleted at most every ten minutes per instance, by whichever request comes. */
  private async purgeNowAndThen(): Promise<void> {
    if (this.clock.monotonic() - this.lastPurge < 10 * 60_000) return;
    this.lastPurge = this.clock.monotonic();
    await this.claims.purgeExpired().catch(() => undefined);
  }
}
