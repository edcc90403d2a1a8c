/**
 * What happens when an account's balance cannot fund a lease (or a charge made straight to the
 * balance, a video job's) while credits of the account may sit in leases: this instance's idle
 * ones go back at once and the request is tried again; its busy ones go back as their calls
 * settle, and other instances are asked to give theirs back. While any lease of the account is
 * open, the caller gets a 402 with Retry-After: 1, and a retry a moment later finds the
 * credits; with none open, the plain 402. The same for a key whose daily cap cannot fund a lease
 * while the key's own leases hold the room (a 402 with Retry-After: 1, not the 429 to midnight).
 * And the operator's side of the same: calling every lease of an account back when a removal of
 * credits waits on them (callBackLeases).
 */
import { DomainError } from '../errors/domain-error';
import type { TopicFeed } from '../ports/topic-feed';
import { waitUntil } from '../shared/deadline';

/** 402, but retryable: the credits exist and are held by calls in progress. */
export const creditsInFlight = () =>
  new DomainError('insufficient_credits', 'Your credit balance does not cover this request while other calls of this account are in progress; retry in a second.', {
    retryAfterSeconds: 1,
  });

/**
 * The same, when the calls in progress are the key's own: each new lease it took (bounded by the
 * balance and by what its daily cap leaves today) went to its other calls first.
 */
export const keyCreditsInFlight = () =>
  new DomainError('insufficient_credits', "Other calls of this API key in progress hold what its balance and daily spend cap allow now; retry in a second.", {
    retryAfterSeconds: 1,
  });

/**
 * Whose leases a shortfall concerns: an account's (its balance is short) or one key's (its daily
 * cap is: each open lease of the key counts whole against the cap until it closes).
 */
export interface LeaseScope {
  accountId: string;
  keyId?: string;
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
  /** Where the other instances hear a recall. */
  recalls: TopicFeed;
}

/**
 * `request` failed with `shortfall` (the balance, or the key's daily cap, cannot fund it): answers
 * its retry's result, or throws `shortfall` when no lease of the scope is open anywhere, else
 * `inFlight()` (a 402 with Retry-After: 1: the room exists and is held by calls in progress) when
 * none of the leases it recalls comes back within RECALL_WAIT_MS.
 */
export async function afterShortfall<T>(parties: ShortfallParties, scope: LeaseScope, request: () => Promise<T>, shortfall: DomainError, inFlight: () => DomainError = creditsInFlight): Promise<T> {
  if (await parties.returnIdleOf(scope)) {
    const grant = await request().catch(() => undefined);
    if (grant) return grant;
  }
  const busyHere = parties.holdsLeaseOf(scope);
  const elsewhere = await parties.openElsewhere(scope);
  if (!busyHere && elsewhere === 0) throw shortfall;
  parties.recall(scope);
  if (elsewhere > 0) await parties.recalls.publish(recallMessage(scope));
  if (await someCameBack(parties, scope, busyHere, elsewhere)) {
    const grant = await request().catch(() => undefined);
    if (grant) return grant;
  }
  // Still short: the 402 to retry, even when every lease seems back by now. Concurrent calls of
  // the scope take and close leases between any two looks, so "all back and no room" cannot be
  // told from "held a moment ago" here (answering the 429 to midnight on it refused a call that
  // fit the cap); the retry a second later finds the leases closed and gets the real answer.
  throw inFlight();
}

/**
 * How long a request short of room waits for recalled leases to come back before the 402 to
 * retry: another instance's lease is most often idle (the key's calls there have settled) and
 * is back within milliseconds of the recall, and a call here that settles gives its lease back
 * as soon. Two instances taking turns with a capped key's calls answered every other one 402
 * "insufficient credits" on an account of 1,000 credits (session 28's soak) before this wait.
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
  if (!byScope) waits.set(parties, (byScope = new Map()));
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
  );

/**
 * Brings the account's leased credits back to its balance, on every instance: this one's leases
 * are retired (each closes once its calls settle), the other instances are asked over the recall
 * feed, and this waits, up to `withinMs`, until the database holds no open lease of the account.
 * An operator's removal of credits runs it after taking the balance: each lease, as it closes,
 * gives the removal what it noted on it (migration 20261202000000).
 */
export async function callBackLeases(parties: ShortfallParties, accountId: string, withinMs: number): Promise<void> {
  parties.recall({ accountId });
  if ((await parties.openElsewhere({ accountId })) > 0) await parties.recalls.publish(recallMessage({ accountId }));
  await waitUntil(async () => (await parties.openAnywhere(accountId)) === 0, withinMs, 25);
}
