/**
 * Billing over an in-memory credit lease. The Billing is the real one (its rules for test keys,
 * resumed calls and settling once are what the services lean on); beneath it, the lease book is a
 * fake that holds one account's credits in memory and records every hold, commit and release,
 * and the stream starts are a fake that records which calls began answering and what they owe.
 */
import { Billing } from '../../../src/domain/credits/billing';
import type { LeaseBook, Reservation } from '../../../src/domain/credits/lease-book';
import type { StreamOpening, StreamStarts } from '../../../src/domain/credits/stream-starts';
import type { KeyPrincipal } from '../../../src/domain/keys/principal';
import { DomainError, insufficientCredits } from '../../../src/domain/errors/domain-error';
import { creditsToMicro } from '../../../src/domain/shared/money';

export interface HoldRecord {
  keyId: string;
  amountMicro: number;
}

export interface CommitRecord {
  requestId: string;
  model: string | null;
  /** What the call's hold reserved. */
  heldMicro: number;
  /** What the call cost. */
  costMicro: number;
  /** What the balance moved for it. */
  chargedMicro: number;
}

/** What Billing asks of a lease book. */
type LeaseBookPort = Pick<LeaseBook, 'reserve' | 'commit' | 'release' | 'recordedCharge'>;

export class FakeLeaseBook implements LeaseBookPort {
  readonly holds: HoldRecord[] = [];
  readonly commits: CommitRecord[] = [];
  /** The amounts of the holds given back whole. */
  readonly releases: number[] = [];
  /** When set, every hold is refused with it (a daily cap spent, credits in flight). */
  refusal: DomainError | undefined;
  private readonly recorded = new Map<string, number>();
  private leases = 0;

  /** `balanceMicro`: the account's credits not held by a call. */
  constructor(public balanceMicro: number) {}

  async reserve(key: KeyPrincipal, amountMicro: number): Promise<Reservation> {
    if (this.refusal) throw this.refusal;
    if (amountMicro > this.balanceMicro) throw insufficientCredits();
    this.balanceMicro -= amountMicro;
    this.holds.push({ keyId: key.keyId, amountMicro });
    const lease = {
      id: `lease_${++this.leases}`,
      accountId: key.accountId,
      keyId: key.keyId,
      day: '2026-01-01',
      budgets: key.budgets,
      watched: false,
      free: 0,
      inFlight: 1,
      lastUsed: 0,
      retiring: false,
    };
    return { lease, amountMicro };
  }

  /** The cost beyond the hold comes from the balance, as far as it goes. */
  async commit(r: Reservation, costMicro: number, requestId: string, model: string | null): Promise<number> {
    const chargedMicro = Math.min(costMicro, r.amountMicro + this.balanceMicro);
    this.balanceMicro += r.amountMicro - chargedMicro;
    this.commits.push({ requestId, model, heldMicro: r.amountMicro, costMicro, chargedMicro });
    this.recorded.set(requestId, chargedMicro);
    return chargedMicro;
  }

  release(r: Reservation): void {
    this.balanceMicro += r.amountMicro;
    this.releases.push(r.amountMicro);
  }

  async recordedCharge(requestId: string): Promise<number | null> {
    return this.recorded.get(requestId) ?? null;
  }

  /** A charge committed by an earlier run of the call `requestId` (an idempotent retry's first run). */
  recordCharge(requestId: string, chargedMicro: number): void {
    this.recorded.set(requestId, chargedMicro);
  }

  /** Holds neither committed nor released. */
  get openHolds(): number {
    return this.holds.length - this.commits.length - this.releases.length;
  }
}

/** What Billing asks of the stream starts. */
type StreamStartsPort = Pick<StreamStarts, 'started' | 'settled'>;

export class FakeStreamStarts implements StreamStartsPort {
  readonly running = new Map<string, { opening: StreamOpening; owed: () => number }>();
  readonly settledIds: string[] = [];

  started(opening: StreamOpening, owed: () => number): void {
    this.running.set(opening.requestId, { opening, owed });
  }

  settled(requestId: string): void {
    this.settledIds.push(requestId);
  }

  /** What the stream `requestId` owes now, as its row would say should this instance die. */
  owedNow(requestId: string): number | undefined {
    return this.running.get(requestId)?.owed();
  }
}

export function fakeBilling(options: { balanceCredits?: number } = {}) {
  const book = new FakeLeaseBook(creditsToMicro(options.balanceCredits ?? 1000));
  const streams = new FakeStreamStarts();
  // Billing names the classes; the fakes have their public methods (checked by `implements`), not their private state.
  const billing = new Billing(book as unknown as LeaseBook, streams as unknown as StreamStarts);
  return { billing, book, streams };
}

export const dailyCapSpent = () =>
  new DomainError('daily_cap_exceeded', 'This request would pass the daily spend cap of this API key.', { retryAfterSeconds: 3600 });
