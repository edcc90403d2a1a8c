import { createHash } from 'node:crypto';
import type { Database } from '../ports/database';
import { DomainError, databaseTooSlow, invalidField } from '../errors/domain-error';
import { asWritten } from '../errors/field-path';
import { DATABASE_ANSWER_DEADLINE_MS, withinDeadline } from '../shared/deadline';
import { UnwrittenWrites } from './unwritten-writes';
import { randomBase62 } from '../shared/ids';
import { stableJson } from './stable-json';
import { fromStored, storedError, type StoredError } from './stored-error';
import { monotonicMillis } from '../shared/time';

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
 * A first request claimed before claims named their instance (no holder), still "running" after
 * this long, died with its instance; the key is free again. A claim with a holder is free once
 * the holder stops heartbeating it for `graceSeconds` (the lease grace).
 */
export const ABANDONED_AFTER_SECONDS = 15 * 60;
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
/** How often a response or release the database did not take is tried again. */
export const RETRY_UNWRITTEN_MS = 2_000;
/** What those may hold in memory (response bodies): past it the oldest is let go, and its key frees itself after the grace. */
const MAX_UNWRITTEN_BYTES = 64 * 1024 * 1024;

const PRINTABLE = /^[\x20-\x7e]{1,255}$/;
/** A call id's length: base62, as job ids are (`vid_` + 20), which cursors and paths accept. */
const CALL_ID_LENGTH = 20;

/** One claim's name in this instance's memory (the two parts cannot hold a NUL). */
const claimId = (apiKeyId: string, key: string) => `${apiKeyId}\0${key}`;

interface Row {
  fingerprint: string;
  status_code: number | null;
  response_headers: Record<string, string> | string | null;
  response_body: string | null;
}

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
  /**
   * Stored responses and releases the database did not take (it was away when the first
   * request ended). Without them a key stayed "running" until its 15-minute abandonment: its
   * retries got 409 though the database was back in seconds, and the first retry after it ran
   * (and charged) the request again although it had been answered.
   */
  private readonly unwritten: UnwrittenWrites;
  /**
   * Keys whose first request runs here (`apiKeyId\0key`, with when it was claimed), heartbeated
   * while they do (and while their response waits in `unwritten`), for ABANDONED_AFTER_SECONDS at
   * most: a request that never ended (a handler that never answered) frees its key then, as before.
   */
  private readonly running = new Map<string, number>();
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private readonly instanceId: string;
  private readonly graceSeconds: number;

  constructor(
    private readonly db: Database,
    options: { instanceId: string; graceSeconds: number; onDropped?: (count: number) => void },
  ) {
    this.instanceId = options.instanceId;
    this.graceSeconds = options.graceSeconds;
    this.unwritten = new UnwrittenWrites(RETRY_UNWRITTEN_MS, MAX_UNWRITTEN_BYTES, options.onDropped ?? (() => undefined), DATABASE_ANSWER_DEADLINE_MS);
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
    const claim = this.db.one<{ call_id: string }>(
      `insert into idempotency_keys (api_key_id, idempotency_key, fingerprint, expires_at, holder, heartbeat_at, call_id)
       values (?, ?, ?, now() + make_interval(secs => ?), ?, now(), ?)
       on conflict (api_key_id, idempotency_key) do update
         set fingerprint = excluded.fingerprint, status_code = null, response_headers = null, response_body = null,
             started_at = now(), expires_at = excluded.expires_at, holder = excluded.holder, heartbeat_at = now(), released = false,
             call_id = case when idempotency_keys.expires_at < now() then excluded.call_id
                            else coalesce(idempotency_keys.call_id, excluded.call_id) end
         where idempotency_keys.expires_at < now()
            or (idempotency_keys.status_code is null and idempotency_keys.fingerprint = excluded.fingerprint
                and (idempotency_keys.released
                  or (idempotency_keys.holder is null and idempotency_keys.started_at < now() - make_interval(secs => ?))
                  or (idempotency_keys.holder is not null and idempotency_keys.heartbeat_at < now() - make_interval(secs => ?))))
       returning call_id`,
      [apiKeyId, key, fingerprint, KEEP_SECONDS, this.instanceId, proposed, ABANDONED_AFTER_SECONDS, this.graceSeconds],
    );
    const claimed = await withinDeadline(claim, DATABASE_ANSWER_DEADLINE_MS, databaseTooSlow).catch((err: unknown) => {
      // Past the deadline (a stalled database): the caller gets a 503 now, and a claim that lands
      // when the database wakes is freed at once, as a 5xx frees it, so the retry runs instead of
      // meeting a 409. (A claim that failed outright has nothing to free.)
      void claim.then((row) => (row ? this.abandon(apiKeyId, key) : undefined)).catch(() => undefined);
      throw err;
    });
    if (claimed) {
      this.hold(apiKeyId, key);
      return { kind: 'run', call: { id: claimed.call_id, resumed: claimed.call_id !== proposed } };
    }
    const row = await withinDeadline(
      this.db.one<Row>(`select fingerprint, status_code, response_headers, response_body from idempotency_keys where api_key_id = ? and idempotency_key = ?`, [
        apiKeyId,
        key,
      ]),
      DATABASE_ANSWER_DEADLINE_MS,
      databaseTooSlow,
    );
    // Gone in between (purged past its 24 hours): claim it again.
    if (!row) return this.start(apiKeyId, key, fingerprint);
    if (row.fingerprint !== fingerprint) {
      throw new DomainError('idempotency_error', `This ${IDEMPOTENCY_HEADER} was already used with a different request.`, {
        fieldPath: [asWritten(IDEMPOTENCY_HEADER)],
        code: 'idempotency_key_reused',
      });
    }
    if (row.status_code === null) {
      throw new DomainError('idempotency_error', `A request with this ${IDEMPOTENCY_HEADER} is still running; retry after it finishes.`, {
        fieldPath: [asWritten(IDEMPOTENCY_HEADER)],
        code: 'idempotency_key_in_use',
        retryAfterSeconds: RETRY_AFTER_SECONDS,
      });
    }
    const headers = typeof row.response_headers === 'string' ? (JSON.parse(row.response_headers) as Record<string, string>) : (row.response_headers ?? {});
    return { kind: 'replay', response: { status: row.status_code, headers, body: Buffer.from(row.response_body ?? '', 'base64') } };
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
    const body = response.body.toString('base64');
    // Only this instance's claim: one another instance took over (this one looked dead) is its to answer.
    await this.persist(apiKeyId, key, body.length, () =>
      this.db.run(
        `update idempotency_keys set status_code = ?, response_headers = ?::jsonb, response_body = ?
          where api_key_id = ? and idempotency_key = ? and status_code is null and holder = ?`,
        [response.status, JSON.stringify(response.headers), body, apiKeyId, key, this.instanceId],
      ),
    );
  }

  /**
   * Releases a key whose run produced no answer a retry should see (tried again, as `complete`):
   * the next request with the same body runs at once, as the same call, so whatever this run or
   * one before it committed under the call id (a job, a charge) is found, not made again.
   */
  async abandon(apiKeyId: string, key: string): Promise<void> {
    await this.persist(apiKeyId, key, 0, () =>
      this.db.run(
        `update idempotency_keys set released = true, holder = null, heartbeat_at = null
          where api_key_id = ? and idempotency_key = ? and status_code is null and holder = ?`,
        [apiKeyId, key, this.instanceId],
      ),
    );
  }

  /** Shutdown: no more heartbeats (an instance that stops has answered or released its claims, or keeps them in memory no longer). */
  stop(): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
  }

  /** Keys whose response or release waits for the database. */
  get unwrittenCount(): number {
    return this.unwritten.size;
  }

  private persist(apiKeyId: string, key: string, bytes: number, write: () => Promise<unknown>): Promise<void> {
    const id = claimId(apiKeyId, key);
    // Done running here; a write the database does not take is heartbeated from `unwritten` until it lands.
    this.running.delete(id);
    return this.unwritten.run(id, bytes, write);
  }

  private hold(apiKeyId: string, key: string): void {
    this.running.set(claimId(apiKeyId, key), monotonicMillis());
    // Often enough that a claim misses several heartbeats before the grace runs out, as a lease does.
    this.heartbeatTimer ??= setInterval(() => void this.heartbeat(), Math.max(200, (this.graceSeconds * 1000) / 6)).unref();
  }

  /**
   * Says this instance still runs its claims: those whose request runs, and those whose response
   * waits for the database. A failed heartbeat (the database away) is not retried: the next one
   * comes in a sixth of the grace.
   */
  private async heartbeat(): Promise<void> {
    const oldest = monotonicMillis() - ABANDONED_AFTER_SECONDS * 1000;
    for (const [id, at] of this.running) if (at < oldest) this.running.delete(id);
    const ids = [...this.running.keys(), ...this.unwritten.ids()];
    if (ids.length === 0) {
      clearInterval(this.heartbeatTimer!);
      this.heartbeatTimer = null;
      return;
    }
    const apiKeyIds = ids.map((id) => id.slice(0, id.indexOf('\0')));
    const keys = ids.map((id) => id.slice(id.indexOf('\0') + 1));
    await this.db
      .run(
        `update idempotency_keys set heartbeat_at = now()
          where holder = ? and status_code is null
            and (api_key_id, idempotency_key) in (select * from unnest(?::text[], ?::text[]))`,
        [this.instanceId, apiKeyIds, keys],
      )
      .catch(() => undefined);
  }

  /** Expired keys are deleted at most every ten minutes per instance, by whichever request comes. */
  private async purgeNowAndThen(): Promise<void> {
    if (monotonicMillis() - this.lastPurge < 10 * 60_000) return;
    this.lastPurge = monotonicMillis();
    await this.db.run(`delete from idempotency_keys where expires_at < now()`).catch(() => undefined);
  }
}
