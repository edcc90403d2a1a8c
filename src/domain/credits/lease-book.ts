/**
 * This instance's credit leases, one per key at a time, served from memory. A call reserves
 * its hold from its key's lease (taking a new lease when there is none or it is too small),
 * and its charge is recorded through the ChargeBatcher before its response goes out. Leases go
 * back (what their recorded charges did not use) when idle, at UTC midnight, when recalled by
 * another instance short of credits, and on shutdown; a lease whose holder stopped
 * heartbeating is closed by any instance. The database is the truth: closing a lease returns
 * amount − Σ recorded charges, whatever this memory believed.
 */
import { DomainError, databaseTooSlow } from '../errors/domain-error';
import { DATABASE_ANSWER_DEADLINE_MS, waitUntil, withinDeadline } from '../shared/deadline';
import type { KeyPrincipal } from '../keys/principal';
import { utcDay } from '../shared/time';
import type { Clock } from '../ports/clock';
import { systemClock } from '../shared/system-clock';
import type { TopicFeed } from '../ports/topic-feed';
import type { ChargeBatcher } from './charge-batcher';
import { CHARGE_STATUS, chargeTaken, type ChargeRow, type LeaseStore } from './lease-store';
import type { RequestLogRow } from '../requests/call-log';
import { KeptCharges, type KeptChargesOptions } from './kept-charges';
import { retryOnLockConflict } from './lock-conflict';
import { startLeaseUpkeep, type LeaseUpkeepOptions } from './lease-upkeep';
import { callBackLeases, creditsInFlight, scopeOfRecall, type LeaseScope, type ShortfallParties } from './account-shortfall';
import { afterRefusal, newLeaseFor, trueShortfall, type TakeTerms } from './lease-take';
import { inScope, type Lease, type Reservation } from './lease';
import { sameBudgets } from './budgets';

export type { Reservation } from './lease';

export interface LeaseBookOptions extends KeptChargesOptions, LeaseUpkeepOptions, TakeTerms {}

export class LeaseBook {
  private readonly current = new Map<string, Lease>();
  private readonly retiring = new Set<Lease>();
  /** Closes under way, so a caller can wait for the credits to be back. */
  private readonly closes = new Map<Lease, Promise<void>>();
  private readonly taking = new Map<string, Promise<void>>();
  private stopUpkeep: () => void = () => undefined;
  private stopped = false;
  /** Charges the database could not take, until they are recorded. */
  private readonly kept: KeptCharges;
  /** What the account-shortfall path asks of this book. */
  private readonly shortfall: ShortfallParties;
  private readonly clock: Clock;

  constructor(
    private readonly store: LeaseStore,
    private readonly batcher: ChargeBatcher,
    recalls: TopicFeed,
    private readonly options: LeaseBookOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    recalls.subscribe((message) => this.recall(scopeOfRecall(message)));
    this.kept = new KeptCharges(store, options);
    this.shortfall = {
      returnIdleOf: (scope) => this.returnIdleOf(scope),
      holdsLeaseOf: (scope) => [...this.current.values(), ...this.retiring].some(inScope(scope)),
      recall: (scope) => this.recall(scope),
      openElsewhere: (scope) => store.openElsewhere(options.instanceId, scope.accountId, scope.keyId),
      openAnywhere: (accountId) => store.openOf(accountId),
      trueShortfall: (scope, asked) => trueShortfall(store, scope, asked),
      recalls,
      clock: this.clock,
    };
  }

  /** Starts the idle return, heartbeat, stale-lease sweep and journal replay (lease-upkeep.ts). */
  start(): void {
    this.stopUpkeep = startLeaseUpkeep(this.store, this.options, { returnIdle: () => this.returnIdle(), recordKept: () => this.kept.record() });
  }

  async reserve(key: KeyPrincipal, amountMicro: number, now = new Date(this.clock.now())): Promise<Reservation> {
    if (this.stopped) throw new DomainError('service_unavailable', 'The server is shutting down.', { retryAfterSeconds: 1 });
    const day = utcDay(now);
    for (let attempt = 0; attempt < 4; attempt++) {
      const lease = this.current.get(key.keyId);
      // A lease taken under other budgets (the owner changed them; the key's record, and so `key`,
      // is fresh on every instance within a second) is not used: its size may pass the new ones.
      if (lease && lease.day === day && !lease.retiring && lease.free >= amountMicro && sameBudgets(lease.budgets, key.budgets)) {
        lease.free -= amountMicro;
        lease.inFlight++;
        lease.lastUsed = this.clock.monotonic();
        return { lease, amountMicro };
      }
      if (lease) this.retire(lease);
      await this.takeFor(key, amountMicro, now);
    }
    // Other calls of the key kept taking what each new lease brought: they will settle soon.
    throw creditsInFlight();
  }

  /**
   * Records the call's charge (the reservation, what else the lease has free, then the balance
   * directly; any rest uncollected) and frees what the reservation did not use. Answers what
   * was charged, in micro-credits, once it is committed.
   *
   * A charge is only ever recorded for a call its provider answered (a stream may be relayed
   * already), so one the database cannot take now — unreachable, stalled past the batcher's
   * deadline, or its reply lost after it committed — does not fail the call: it is kept in the
   * journal (in memory when the journal cannot be written) and recorded later, idempotently by
   * request id; the answer is then what the lease holds for the call, which is what the charge
   * will be (what it cost beyond the lease is recorded as uncollected). Failing the call instead
   * could not say "not billed" truthfully: a commit whose reply was lost has billed it.
   * `log`, the call's request-log row, goes with the charge (into the journal too): no round trip of its own.
   */
  async commit(r: Reservation, costMicro: number, requestId: string, model: string | null, log?: RequestLogRow): Promise<number> {
    const { lease } = r;
    const extra = Math.max(0, Math.min(costMicro - r.amountMicro, lease.free));
    lease.free -= extra;
    const leaseMicro = Math.min(costMicro, r.amountMicro + extra);
    const row: ChargeRow = {
      requestId,
      leaseId: lease.id,
      accountId: lease.accountId,
      keyId: lease.keyId,
      model,
      leaseMicro,
      excessMicro: costMicro - leaseMicro,
      log,
      ...(lease.watched ? { watched: true } : {}),
    };
    try {
      const outcome = await this.batcher.record(row);
      if (!chargeTaken(outcome)) throw new Error(`lease ${lease.id} refused the charge of ${requestId}`);
      // The database lost the lease: this call was paid from the balance, and the key's next
      // calls wait for a lease it holds.
      if (outcome.status === CHARGE_STATUS.leaseLost) this.retire(lease);
      else lease.free += r.amountMicro + extra - leaseMicro;
      // Nothing moved although the call cost something: recorded before (the same call's charge,
      // committed by an instance that died before answering; see IdempotencyStart), or nothing
      // left to collect. What the call was charged is then what the balance moved for it.
      if (outcome.chargedMicro === 0 && costMicro > 0) return (await this.store.recordedCharge(requestId).catch(() => null)) ?? 0;
      return outcome.chargedMicro;
    } catch (err) {
      // The database decides what was recorded; this lease is retired and closed from it.
      this.retire(lease);
      // Answered now, so the answer must say what the charge will be: what the lease holds for
      // the call is certain; what lies beyond it would depend on the balance and the key's budgets
      // when the journal is recorded, so it is not charged but recorded as uncollected.
      this.kept.keep({ ...row, excessMicro: 0, waivedMicro: row.excessMicro }, err);
      return leaseMicro;
    } finally {
      this.settled(lease);
    }
  }

  /** What a call was charged, or null when nothing of it is recorded (see LeaseStore.recordedCharge). */
  recordedCharge(requestId: string): Promise<number | null> {
    return withinDeadline(this.store.recordedCharge(requestId), DATABASE_ANSWER_DEADLINE_MS, databaseTooSlow, this.clock);
  }

  /** Reservations not yet settled on this instance, of one account or all (0 once every call is billed). */
  inFlightFor(accountId?: string): number {
    let n = 0;
    for (const lease of [...this.current.values(), ...this.retiring]) if (accountId === undefined || lease.accountId === accountId) n += lease.inFlight;
    return n;
  }

  /** Gives back every lease no call is using now, and waits until they are closed. */
  async returnIdleNow(): Promise<void> {
    await this.returnIdleOf();
  }

  /** Brings the account's leased credits back to its balance, on every instance (account-shortfall.ts). */
  callBack(accountId: string, withinMs: number): Promise<void> {
    return callBackLeases(this.shortfall, accountId, withinMs);
  }

  /** Records the charges the journal keeps now (after a pass already under way, one more). */
  async recordKeptNow(): Promise<void> {
    await this.kept.record().catch(() => undefined);
    await this.kept.record();
  }

  /** The call charges nothing (it failed): its reservation is free again. */
  release(r: Reservation): void {
    r.lease.free += r.amountMicro;
    this.settled(r.lease);
  }

  /** Shutdown: no new reservations; every lease goes back once its calls are settled. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopUpkeep();
    for (const lease of [...this.current.values()]) this.retire(lease);
    await waitUntil(() => ![...this.retiring].some((l) => l.inFlight > 0), 30_000, 20, this.clock);
    // What the journal keeps is recorded now if the database is back; if not (or it does not
    // answer within 5 s), it stays on disk for the next start or another instance.
    const replayed = this.kept.record().catch((err) => this.options.onError?.('charge journal replay', err));
    await Promise.race([replayed, new Promise<void>((r) => this.clock.setTimeout(r, 5_000).unref())]);
    for (const lease of [...this.retiring]) void this.closeNow(lease);
    await Promise.all(this.closes.values());
  }

  private settled(lease: Lease): void {
    lease.inFlight--;
    lease.lastUsed = this.clock.monotonic();
    if (lease.retiring && lease.inFlight === 0) void this.closeNow(lease);
  }

  private retire(lease: Lease): void {
    if (this.current.get(lease.keyId) === lease) this.current.delete(lease.keyId);
    lease.retiring = true;
    this.retiring.add(lease);
    if (lease.inFlight === 0) void this.closeNow(lease);
  }

  private closeNow(lease: Lease): Promise<void> {
    const running = this.closes.get(lease);
    if (running) return running;
    // A charge on it waits in the journal: closed by the idle pass once the charge is recorded.
    if (this.kept.holdsChargeOn(lease.id)) return Promise.resolve();
    if (!this.retiring.delete(lease)) return Promise.resolve();
    const close = retryOnLockConflict(() => this.store.close(lease.id))
      .then(
        () => undefined,
        (err) => {
          // Still open in the database (and heartbeated by this instance): tried again by the idle pass.
          this.retiring.add(lease);
          this.options.onError?.('lease close', err);
        },
      )
      .finally(() => this.closes.delete(lease));
    this.closes.set(lease, close);
    return close;
  }

  /**
   * One take per key at a time; a call that finds one running waits for it and looks again.
   * Nobody waits for a take longer than the database deadline: a stalled database (no error, only
   * silence) is a 503 within seconds instead of requests held for the whole stall. The take
   * itself cannot be let go (it may commit when the database wakes), so it goes on, and the
   * lease it brings then is this instance's like any other: in the book, heartbeated, used by
   * the key's next calls, returned when idle. Until it settles, the key's calls wait on it.
   */
  private takeFor(key: KeyPrincipal, amountMicro: number, now: Date): Promise<void> {
    const running = this.taking.get(key.keyId);
    // A caller that found the take running looks again whatever its outcome.
    const waited = running ? running.catch(() => undefined) : this.startTake(key, amountMicro, now);
    return withinDeadline(waited, DATABASE_ANSWER_DEADLINE_MS, databaseTooSlow, this.clock);
  }

  private startTake(key: KeyPrincipal, amountMicro: number, now: Date): Promise<void> {
    const take = this.take(key, amountMicro, now);
    this.taking.set(key.keyId, take);
    const done = () => this.taking.delete(key.keyId);
    void take.then(done, done);
    return take;
  }

  private async take(key: KeyPrincipal, amountMicro: number, now: Date): Promise<void> {
    const grant = await newLeaseFor(this.store, this.shortfall, this.options, key, amountMicro, now);
    const lease: Lease = {
      id: grant.id,
      accountId: key.accountId,
      keyId: key.keyId,
      day: utcDay(now),
      budgets: key.budgets,
      watched: grant.watched,
      free: grant.amountMicro,
      inFlight: 0,
      lastUsed: this.clock.monotonic(),
      retiring: false,
    };
    this.current.set(key.keyId, lease);
    // A take that landed after shutdown began (it waited on a stalled database): straight back.
    if (this.stopped) this.retire(lease);
  }

  /**
   * A charge made straight to the balance (a video job's): when the balance or a budget of the key
   * is short while credits sit in leases, they are called back as for a lease (account-shortfall.ts),
   * so the caller gets the charge on a retry a second later, not a refusal for as long as other calls run.
   */
  async chargeBeside<T>(key: KeyPrincipal, amountMicro: number, charge: () => Promise<T>, now = new Date(this.clock.now())): Promise<T> {
    try {
      return await charge();
    } catch (err) {
      return afterRefusal(this.shortfall, key, amountMicro, charge, err, now);
    }
  }

  /** Closes this instance's unused leases (of one account or key, or all); answers whether any went back. */
  private async returnIdleOf(scope?: LeaseScope): Promise<boolean> {
    const ofAccount = scope ? inScope(scope) : () => true;
    const idle = [...this.current.values()].filter((l) => ofAccount(l) && l.inFlight === 0);
    for (const lease of idle) this.retire(lease);
    // Leases whose close failed earlier (the database was away or stalled) go again now.
    for (const lease of [...this.retiring]) if (ofAccount(lease) && lease.inFlight === 0) void this.closeNow(lease);
    const pending = [...this.closes.entries()].filter(([l]) => ofAccount(l)).map(([, p]) => p);
    await Promise.all(pending);
    return pending.length > 0;
  }

  private recall(scope: LeaseScope): void {
    for (const lease of [...this.current.values()]) if (inScope(scope)(lease)) this.retire(lease);
  }

  private async returnIdle(): Promise<void> {
    const now = this.clock.monotonic();
    const today = utcDay(new Date(this.clock.now()));
    for (const lease of [...this.current.values()]) {
      if (lease.day !== today || (lease.inFlight === 0 && now - lease.lastUsed >= this.options.idleMs)) this.retire(lease);
    }
    // Leases whose close failed (the database was unreachable) are closed again.
    for (const lease of [...this.retiring]) if (lease.inFlight === 0 && !this.closes.has(lease)) void this.closeNow(lease);
  }
}
