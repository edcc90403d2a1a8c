/**
 * How the lease book takes a new lease for a key's call, and what it answers when the balance or
 * the key's daily cap refuses one (or a charge made straight to the balance beside the leases):
 * the retry once the room is back, or the refusal's true reason (account-shortfall.ts).
 */
import { DomainError } from '../errors/domain-error';
import type { KeyPrincipal } from '../keys/principal';
import { newId } from '../shared/ids';
import { utcDay } from '../shared/time';
import { afterShortfall, type LeaseScope, type ShortfallParties, type ShortRequest } from './account-shortfall';
import type { LeaseGrant, LeaseRequest, LeaseStore } from './lease-store';
import { shortfallError } from './ledger';
import { retryOnLockConflict } from './lock-conflict';

/**
 * A lease of at least `minMicro`, up to `wantMicro`; throws 402 / daily cap when it cannot. It
 * counts on the database's day, whatever `day` this instance's clock
 * gave, which only names the day in this instance's memory (its lease is retired at its midnight).
 */
export async function takeLease(store: Pick<LeaseStore, 'take'>, input: LeaseRequest & { now: Date }): Promise<LeaseGrant> {
  const { now, ...request } = input;
  const taken = await store.take(request);
  if (typeof taken === 'string') throw shortfallError(taken, now);
  return taken;
}

/** How big a lease the book asks for, and whose it is. */
export interface TakeTerms {
  instanceId: string;
  /** A lease is asked for this many times the call at hand, at least `minWantMicro`. */
  wantFactor: number;
  minWantMicro: number;
}

/** A new lease for the key's call of `amountMicro`: its grant, or the refusal's true reason. */
export async function newLeaseFor(
  store: Pick<LeaseStore, 'take'>,
  parties: ShortfallParties,
  terms: TakeTerms,
  key: KeyPrincipal,
  amountMicro: number,
  now: Date,
): Promise<LeaseGrant> {
  const want = Math.max(amountMicro * terms.wantFactor, terms.minWantMicro);
  // A take aborted for a deadlock (its key's day and account rows against a charge batch's
  // excess, which locks them the other way round) wrote nothing: it is tried again.
  const request = () =>
    retryOnLockConflict(() =>
      takeLease(store, {
        id: newId('lease'),
        accountId: key.accountId,
        keyId: key.keyId,
        capMicro: key.dailySpendCapMicro,
        minMicro: amountMicro,
        wantMicro: want,
        day: utcDay(now),
        instanceId: terms.instanceId,
        now,
      }),
    );
  try {
    return await request();
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    // The cap counts the key's open leases whole until they close: while one is open (its
    // calls settling here, or another instance's), the room may come back in a moment, so the
    // call gets the 429 to retry in a second, not the 429 to midnight of a spent cap.
    return afterRefusal(parties, key, amountMicro, request, err);
  }
}

/** A take or a charge refused for the balance or the key's cap: its retry once the room is back, or the true reason (account-shortfall.ts). */
export async function afterRefusal<T>(parties: ShortfallParties, key: KeyPrincipal, amountMicro: number, request: () => Promise<T>, err: unknown): Promise<T> {
  if (err instanceof DomainError && err.type === 'insufficient_credits')
    return afterShortfall(parties, { accountId: key.accountId }, { amountMicro }, request, err);
  if (err instanceof DomainError && err.type === 'daily_cap_exceeded') {
    return afterShortfall(parties, { accountId: key.accountId, keyId: key.keyId }, { amountMicro, capMicro: key.dailySpendCapMicro }, request, err);
  }
  throw err;
}

/**
 * Whether the request is short whatever the calls in progress do: the account's balance shown
 * (its leased, uncharged credits counted as its own) does not cover it, or, for a key's scope,
 * what the key's committed charges spent today leaves under its cap does not.
 */
export async function shortWhateverSettles(store: Pick<LeaseStore, 'fundsWhateverSettles'>, scope: LeaseScope, asked: ShortRequest): Promise<boolean> {
  const key = scope.keyId ? { keyId: scope.keyId, capMicro: asked.capMicro ?? null } : null;
  const funds = await store.fundsWhateverSettles(scope.accountId, key?.keyId ?? null);
  if (funds.balanceMicro < asked.amountMicro) return true;
  return key !== null && key.capMicro !== null && key.capMicro - funds.keySpentMicro < asked.amountMicro;
}
