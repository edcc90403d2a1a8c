/**
 * How the lease book takes a new lease for a key's call, and what it answers when the balance or
 * one of the key's budgets refuses one (or a charge made straight to the balance beside the
 * leases): the retry once the room is back, or the refusal's true reason (account-shortfall.ts).
 */
import { DomainError, insufficientCredits } from '../errors/domain-error';
import type { KeyPrincipal } from '../keys/principal';
import { newId } from '../shared/ids';
import { afterShortfall, type LeaseScope, type ShortfallParties, type ShortRequest } from './account-shortfall';
import { BUDGET_PERIODS, budgetExceeded, periodEnd, type BudgetPeriod } from './budgets';
import type { LeaseGrant, LeaseRequest, LeaseStore } from './lease-store';
import { shortfallError } from './ledger';
import { retryOnLockConflict } from './lock-conflict';

/**
 * A lease of at least `minMicro`, up to `wantMicro`; throws 402 / a budget's 429 when it cannot. It
 * counts on the database's day, whatever day this instance's clock gives, which only names the
 * day in this instance's memory (its lease is retired at its midnight); `now` dates a budget's
 * Retry-After.
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
  // A take aborted for a deadlock (its key's spend and account rows against a charge batch's
  // excess, which locks them the other way round) wrote nothing: it is tried again.
  const request = () =>
    retryOnLockConflict(() =>
      takeLease(store, {
        id: newId('lease'),
        accountId: key.accountId,
        keyId: key.keyId,
        budgets: key.budgets,
        minMicro: amountMicro,
        wantMicro: want,
        instanceId: terms.instanceId,
        now,
      }),
    );
  try {
    return await request();
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    // A budget counts the key's open leases whole until they close: while one is open (its
    // calls settling here, or another instance's), the room may come back in a moment, so the
    // call gets the 429 to retry in a second, not the 429 to the period's end of a spent budget.
    return afterRefusal(parties, key, amountMicro, request, err, now);
  }
}

/** A take or a charge refused for the balance or one of the key's budgets: its retry once the room is back, or the true reason (account-shortfall.ts). */
export async function afterRefusal<T>(
  parties: ShortfallParties,
  key: KeyPrincipal,
  amountMicro: number,
  request: () => Promise<T>,
  err: unknown,
  now: Date,
): Promise<T> {
  if (err instanceof DomainError && err.type === 'insufficient_credits')
    return afterShortfall(parties, { accountId: key.accountId }, { amountMicro, now }, request);
  if (err instanceof DomainError && (err.type === 'daily_cap_exceeded' || err.type === 'budget_exceeded')) {
    return afterShortfall(parties, { accountId: key.accountId, keyId: key.keyId }, { amountMicro, budgets: key.budgets, now }, request);
  }
  throw err;
}

/**
 * The refusal the request gets whatever the calls in progress do, or null when they hold the
 * room it needs: the 402 when the account's balance shown (its leased, uncharged credits counted
 * as its own) does not cover it; for a key's scope, the 429 of the budget whose room (what the
 * key's committed charges in its period leave under it) does not, of several the one whose period
 * ends last.
 */
export async function trueShortfall(store: Pick<LeaseStore, 'fundsWhateverSettles'>, scope: LeaseScope, asked: ShortRequest): Promise<DomainError | null> {
  const keyId = scope.keyId ?? null;
  const funds = await store.fundsWhateverSettles(scope.accountId, keyId);
  if (funds.balanceMicro < asked.amountMicro) return insufficientCredits();
  if (keyId === null || !asked.budgets) return null;
  const budgets = asked.budgets;
  const short = BUDGET_PERIODS.filter((p) => budgets[p] !== null && budgets[p] - funds.keySpentMicro[p] < asked.amountMicro);
  const last = short.reduce<BudgetPeriod | null>((a, p) => (a === null || periodEnd(p, asked.now) >= periodEnd(a, asked.now) ? p : a), null);
  return last === null ? null : budgetExceeded(last, asked.now);
}
