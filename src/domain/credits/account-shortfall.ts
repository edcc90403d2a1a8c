/**
 * What happens when an account's balance cannot fund a lease (or a charge made straight to the
 * balance, a video job's) while credits of the account may sit in leases: this instance's idle
 * ones go back at once and the request is tried again; its busy ones go back as their calls
 * settle, and other instances are asked to give theirs back. While any lease of the account is
 * open, the caller gets a 429 `credits_in_flight` with Retry-After: 1, and a retry a moment
 * later finds the credits; when the balance itself is short, the 402. The same for a key whose
 * budget (its daily cap, its week's or month's budget) cannot fund a lease while the key's own
 * leases hold the room (`credits_in_flight`, not the 429 to the period's end, which is for a
 * budget its committed charges have spent).
 * And the operator's side of the same: calling every lease of an account back when a removal of
 * credits waits on them (callBackLeases).
 */
import { DomainError } from '../errors/domain-error';
import type { Clock } from '../ports/clock';
import type { TopicFeed } from '../ports/topic-feed';
import { waitUntil } from '../shared/deadline';
import type { Budgets } from './budgets';

/**
 * Not the balance and not a budget: the room for the call exists, and calls in progress (here or
 * on another instance) hold it in their leases until they settle. A 429 to retry in a second,
 * never `insufficient_credits` (which sends a client off to top up an account that need not be)
 * nor `daily_cap_exceeded` / `budget_exceeded` (which say wait until the period's end).
 */
export const creditsInFlight = () =>
  new DomainError('rate_limit_exceeded', 'Calls of this account in progress hold the credits this request needs until they settle; retry in a second.', {
    code: 'credits_in_flight',
    retryAfterSeconds: 1,
  });

/**
 * Whose leases a shortfall concerns: an account's (its balance is short) or one key's (a budget
 * is: each open lease of the key counts whole against its budgets until it closes).
 */
export interface LeaseScope {
  accountId: string;
  keyId?: string;
}

/** What a request short of room asked for: its amount and, for a key's scope, the key's budgets; `now` dates a budget's Retry-After. */
export interface ShortRequest {
  amountMicro: number;
  budgets?: Budgets;
  now: Date;
}

/** A scope as a recall message on the feed (ids carry no `/`), and back. */
export const recallMessage = (scope: LeaseScope): string => (scope.keyId ? `${scope.accountId}/${scope.keyId}` : scope.accountId);
export function scopeOfRecall(message: string): LeaseScope {
  const slash = message.indexOf('/');
  return slash < 0 ? { accountId: message } : { accountId: message.slice(0, slash), keyId: message.slice(slash + 1) };
}

/** What the shortfall path needs of this instance's lease book and of the database. */
export interface ShortfallParties {
  /** Closes this instance's unused leases of the scope; answers whether any went back. */
  returnIdleOf(scope: LeaseScope): Promise<boolean>;
  /** Whether this instance holds a lease of the scope (in use or going back). */
  holdsLeaseOf(scope: LeaseScope): boolean;
  /** Retires this instance's leases of the scope: each goes back once its calls settle. */
  recall(scope: LeaseScope): void;
  /** Open leases of the scope held by other instances. */
  openElsewhere(scope: LeaseScope): Promise<number>;
  /** Open leases of the account, on every instance. */
  openAnywhere(accountId: string): Promise<number>;
  /**
   * The refusal the request gets whatever the calls in progress do, or null when they hold the
   * room: the balance shown (leased credits counted as the account's) does not cover it, or, for
   * a key's scope, what its committed charges in a budget's period leave under the budget does
   * not. Calls settling only give room back; neither figure grows without a grant or a refund.
   */
  trueShortfall(scope: LeaseScope, request: ShortRequest): Promise<DomainError | null>;
  /** Where the other instances hear a recall. */
  recalls: TopicFeed;
  /** What the waits for leases to come back are timed on (the system's by default). */
  clock?: Clock;
}

/**
 * `request` failed for a shortfall (the balance, or one of the key's budgets, cannot fund it):
 * answers its retry's result once room came back, else throws the true reason: the balance's or
 * the budget's refusal when it is short whatever the calls in progress do, `creditsInFlight` (a
 * 429 to retry in a second) when those calls hold the room and none of the leases recalled came
 * back within RECALL_WAIT_MS.
 */
export async function afterShortfall<T>(parties: ShortfallParties, scope: LeaseScope, asked: ShortRequest, request: () => Promise<T>): Promise<T> {
  if (await parties.returnIdleOf(scope)) {
    const grant = await request().catch(() => undefined);
    if (grant) return grant;
  }
  const busyHere = parties.holdsLeaseOf(scope);
  const elsewhere = await parties.openElsewhere(scope);
  if (busyHere || elsewhere > 0) {
    parties.recall(scope);
    if (elsewhere > 0) await parties.recalls.publish(recallMessage(scope));
    if (await someCameBack(parties, scope, busyHere, elsewhere)) {
      const grant = await request().catch(() => undefined);
      if (grant) return grant;
    }
  }
  const refusal = await parties.trueShortfall(scope, asked);
  if (refusal) throw refusal;
  // No lease open now, and still room: one closed between the refusal and the look.
  if (!busyHere && elsewhere === 0) {
    const grant = await request().catch(() => undefined);
    if (grant) return grant;
  }
  // Still short, though the balance and the budgets have the room: calls in progress hold it. Concurrent
  // calls take and close leases between any two looks, so the retry a second later gets the answer.
  throw creditsInFlight();
}

/**
 * How long a request short of room waits for recalled leases to come back before the 429 to
 * retry: another instance's lease is most often idle (the key's calls there have settled) and
 * is back within milliseconds of the recall, and a call here that settles gives its lease back
 * as soon. Without the wait, two instances taking turns with a capped key's calls refused every
 * other one on an account of 1,000 credits.
 */
export const RECALL_WAIT_MS = 500;
const RECALL_POLL_MS = 15;

/** The waits in progress, per lease book and scope: requests of one scope short together share one. */
const waits = new WeakMap<ShortfallParties, Map<string, Promise<boolean>>>();

/**
 * Whether a lease of the scope closed (here, or one of `elsewhere` on other instances) within
 * RECALL_WAIT_MS. Requests of the same scope that come short while one waits share its wait: an
 * account drained by 200 concurrent calls would otherwise poll the database 200 times over.
 */
function someCameBack(parties: ShortfallParties, scope: LeaseScope, busyHere: boolean, elsewhere: number): Promise<boolean> {
  let byScope = waits.get(parties);
  if (!byScope) waits.set(parties, (byScope = new Map<string, Promise<boolean>>()));
  const name = recallMessage(scope);
  let wait = byScope.get(name);
  if (!wait) {
    const scopeWaits = byScope;
    wait = pollUntilSomeCameBack(parties, scope, busyHere, elsewhere).finally(() => scopeWaits.delete(name));
    byScope.set(name, wait);
  }
  return wait;
}

const pollUntilSomeCameBack = (parties: ShortfallParties, scope: LeaseScope, busyHere: boolean, elsewhere: number): Promise<boolean> =>
  waitUntil(
    async () => (busyHere && !parties.holdsLeaseOf(scope)) || (elsewhere > 0 && (await parties.openElsewhere(scope)) < elsewhere),
    RECALL_WAIT_MS,
    RECALL_POLL_MS,
    parties.clock,
  );

/**
 * Brings the account's leased credits back to its balance, on every instance: this one's leases
 * are retired (each closes once its calls settle), the other instances are asked over the recall
 * feed, and this waits, up to `withinMs`, until the database holds no open lease of the account.
 * An operator's removal of credits runs it after taking the balance: each lease, as it closes,
 * gives the removal what it noted on it (svc_remove_credits, svc_close_lease).
 */
export async function callBackLeases(parties: ShortfallParties, accountId: string, withinMs: number): Promise<void> {
  parties.recall({ accountId });
  if ((await parties.openElsewhere({ accountId })) > 0) await parties.recalls.publish(recallMessage({ accountId }));
  await waitUntil(async () => (await parties.openAnywhere(accountId)) === 0, withinMs, 25, parties.clock);
}
