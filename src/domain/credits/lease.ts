/** One credit lease as this instance holds it in memory, and a call's reservation from it. */
import type { LeaseScope } from './account-shortfall';
import type { Budgets } from './budgets';

export interface Lease {
  id: string;
  accountId: string;
  keyId: string;
  day: string;
  /** The key's budgets when the lease was taken (sized within them): a key whose budgets changed takes a new one. */
  budgets: Budgets;
  /** Its charges may carry the key's spend across a budget's threshold (LeaseGrant.watched). */
  watched: boolean;
  /** Neither reserved nor charged. */
  free: number;
  /** Reservations not yet settled (their charges not yet committed). */
  inFlight: number;
  lastUsed: number;
  /** Takes no new reservations; closed once inFlight reaches 0. */
  retiring: boolean;
}

export interface Reservation {
  lease: Lease;
  amountMicro: number;
}

/** Whether a lease belongs to the scope (an account, or one key of it). */
export const inScope = (scope: LeaseScope) => (lease: Lease) =>
  lease.accountId === scope.accountId && (scope.keyId === undefined || lease.keyId === scope.keyId);
