/**
 * The claims this instance holds: heartbeated while their first request runs here, and while
 * the response or release it ended with waits in memory for the database (unwritten-writes.ts).
 */
import { DATABASE_ANSWER_DEADLINE_MS } from '../shared/deadline';
import type { Clock, TimerHandle } from '../ports/clock';
import { systemClock } from '../shared/system-clock';
import type { ClaimName, IdempotencyRepository } from './idempotency-repository';
import { UnwrittenWrites } from './unwritten-writes';

/**
 * A first request claimed before claims named their instance (no holder), still "running" after
 * this long, died with its instance; the key is free again. A claim with a holder is free once
 * the holder stops heartbeating it for `graceSeconds` (the lease grace).
 */
export const ABANDONED_AFTER_SECONDS = 15 * 60;
/** How often a response or release the database did not take is tried again. */
export const RETRY_UNWRITTEN_MS = 2_000;
/** What those may hold in memory (response bodies): past it the oldest is let go, and its key frees itself after the grace. */
const MAX_UNWRITTEN_BYTES = 64 * 1024 * 1024;

/** One claim's name in this instance's memory (the two parts cannot hold a NUL). */
const claimId = (apiKeyId: string, key: string) => `${apiKeyId}\0${key}`;
const nameOf = (id: string): ClaimName => ({ apiKeyId: id.slice(0, id.indexOf('\0')), key: id.slice(id.indexOf('\0') + 1) });

export class HeldClaims {
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
   * most: a request that never ended (a handler that never answered) frees its key then.
   */
  private readonly running = new Map<string, number>();
  private heartbeatTimer: TimerHandle | null = null;

  constructor(
    private readonly claims: Pick<IdempotencyRepository, 'heartbeat'>,
    private readonly instanceId: string,
    private readonly graceSeconds: number,
    onDropped: (count: number) => void,
    /** What the heartbeats and retries are timed on (the system's by default). */
    private readonly clock: Clock = systemClock,
  ) {
    this.unwritten = new UnwrittenWrites(RETRY_UNWRITTEN_MS, MAX_UNWRITTEN_BYTES, onDropped, DATABASE_ANSWER_DEADLINE_MS, clock);
  }

  /** Keys whose response or release waits for the database. */
  get unwrittenCount(): number {
    return this.unwritten.size;
  }

  /** The claim's first request runs here: heartbeated until it ends. */
  hold(apiKeyId: string, key: string): void {
    this.running.set(claimId(apiKeyId, key), this.clock.monotonic());
    // Often enough that a claim misses several heartbeats before the grace runs out, as a lease does.
    this.heartbeatTimer ??= this.clock.setInterval(() => void this.heartbeat(), Math.max(200, (this.graceSeconds * 1000) / 6)).unref();
  }

  /** The claim's request ended with `write` (its response or release): run now, kept and heartbeated until it lands when it fails. */
  persist(apiKeyId: string, key: string, bytes: number, write: () => Promise<unknown>): Promise<void> {
    const id = claimId(apiKeyId, key);
    // Done running here; a write the database does not take is heartbeated from `unwritten` until it lands.
    this.running.delete(id);
    return this.unwritten.run(id, bytes, write);
  }

  /** Shutdown: no more heartbeats (an instance that stops has answered or released its claims, or keeps them in memory no longer). */
  stop(): void {
    this.clock.clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
  }

  /**
   * Says this instance still runs its claims: those whose request runs, and those whose response
   * waits for the database. A failed heartbeat (the database away) is not retried: the next one
   * comes in a sixth of the grace.
   */
  private async heartbeat(): Promise<void> {
    const oldest = this.clock.monotonic() - ABANDONED_AFTER_SECONDS * 1000;
    for (const [id, at] of this.running) if (at < oldest) this.running.delete(id);
    const ids = [...this.running.keys(), ...this.unwritten.ids()];
    if (ids.length === 0) {
      this.clock.clearInterval(this.heartbeatTimer);
      this.heartbeatTimer = null;
      return;
    }
    await this.claims.heartbeat(this.instanceId, ids.map(nameOf)).catch(() => undefined);
  }
}
