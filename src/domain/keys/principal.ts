import type { Budgets } from '../credits/budgets';

/** Who is calling: an API key (the /v1 powers) or an account owner (an ID token). */
export interface KeyPrincipal {
  kind: 'key';
  keyId: string;
  accountId: string;
  mode: 'live' | 'test';
  allowedModels: string[] | null;
  blockedModels: string[] | null;
  /** What the key may spend per UTC day, week and month, in micro-credits (none for a test key, which spends nothing). */
  budgets: Budgets;
  /**
   * When the credential stops being usable (epoch ms): the key's expiry, or the end of the grace
   * of the replaced secret it was given; a WebSocket opened with it is closed then. Absent: never.
   */
  usableUntil?: number;
}

export interface AccountPrincipal {
  kind: 'account';
  accountId: string;
  /** Set when the token's subject is listed in ADMIN_SUBJECTS: the audit log's actor (`sub:<subject>`). */
  operator?: `sub:${string}`;
  /** When the ID token stops being usable (epoch ms): a WebSocket opened with it is closed then. */
  usableUntil?: number;
}

export type Principal = KeyPrincipal | AccountPrincipal;
