/** The API keys' side in the database, as the key service, the key refresher and the key directory use it. */
import type { SqlExecutor } from '../ports/database';
import type { ApiKey } from './key-record';

/** A key that is not revoked, with its secret's hash (hex): what authentication reads. */
export type ActiveKey = ApiKey & { secretHash: string };

/** A key id and its secret's hash (hex). */
export interface KeyHash {
  id: string;
  secretHash: string;
}

export interface NewKey {
  id: string;
  accountId: string;
  name: string;
  mode: 'live' | 'test';
  secretHash: string;
  allowedModels: string[] | null;
  blockedModels: string[] | null;
  dailySpendCapMicro: number | null;
  weekBudgetMicro: number | null;
  monthBudgetMicro: number | null;
}

/** What an edit writes: a field present is set (null clears it), a field absent is left as it is. */
export interface KeyChanges {
  name?: string;
  allowedModels?: string[] | null;
  blockedModels?: string[] | null;
  dailySpendCapMicro?: number | null;
  weekBudgetMicro?: number | null;
  monthBudgetMicro?: number | null;
}

export interface KeyRepository {
  /** Runs `work` in one transaction: commits when it resolves, rolls back when it throws. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Locks the account's row until the transaction ends, so its keys are counted and added by one transaction at a time. */
  lockAccount(tx: SqlExecutor, accountId: string): Promise<void>;
  /** The account's keys that are not revoked. */
  countActive(tx: SqlExecutor, accountId: string): Promise<number>;
  insert(tx: SqlExecutor, key: NewKey): Promise<ApiKey>;
  /** The account's keys that are not revoked, newest first. */
  listActive(accountId: string): Promise<ApiKey[]>;
  /** One key of the account, unless it is revoked (or another account's). */
  findActive(accountId: string, keyId: string): Promise<ApiKey | undefined>;
  /** Applies `changes` to a key of the account that is not revoked; answers it after, or undefined when there is none. */
  update(accountId: string, keyId: string, changes: KeyChanges): Promise<ApiKey | undefined>;
  /** Revokes a key of the account and drops its webhook; answers false when there was no such key not revoked. */
  revoke(accountId: string, keyId: string): Promise<boolean>;
  clearWebhook(accountId: string, keyId: string): Promise<void>;
  setWebhook(accountId: string, keyId: string, url: string, secret: string): Promise<void>;
  setWebhookSecret(accountId: string, keyId: string, secret: string): Promise<void>;
  /** Those of the keys that are not revoked, with their secrets' hashes. */
  findActiveKeys(ids: readonly string[]): Promise<ActiveKey[]>;
  /** The keys were used now (lastUsed). */
  markUsed(ids: readonly string[]): Promise<void>;
  /** Every key not revoked: its id and secret hash. */
  allActiveHashes(): Promise<KeyHash[]>;
  /** Those of the keys that are not revoked: their ids and secret hashes. */
  activeHashesOf(ids: readonly string[]): Promise<KeyHash[]>;
}
