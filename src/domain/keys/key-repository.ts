/** The API keys' side in the database, as the key service, the key refresher and the key directory use it. */
import type { SqlExecutor } from '../ports/database';
import type { ApiKey } from './key-record';
import type { StoredSecrets } from './key-secrets';

/** A key that is not revoked, with its secrets' hashes: what authentication reads. */
export type ActiveKey = ApiKey & StoredSecrets;

/** A key id and its secrets' hashes. */
export type KeyHash = { id: string } & StoredSecrets;

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
  expiresAt: Date | null;
}

/** What an edit writes: a field present is set (null clears it), a field absent is left as it is. */
export interface KeyChanges {
  name?: string;
  allowedModels?: string[] | null;
  blockedModels?: string[] | null;
  dailySpendCapMicro?: number | null;
  weekBudgetMicro?: number | null;
  monthBudgetMicro?: number | null;
  expiresAt?: Date | null;
}

/** A new secret for a key: the replaced one is taken until `previousSecretUntil`, or not at all when it is null. */
export interface KeyRotation {
  secretHash: string;
  previousSecretUntil: Date | null;
  rotatedAt: Date;
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
  /** Applies `changes` to a key of the account that is not revoked (in `tx` when given); answers it after, or undefined when there is none. */
  update(accountId: string, keyId: string, changes: KeyChanges, tx?: SqlExecutor): Promise<ApiKey | undefined>;
  /**
   * Gives a key of the account that is not revoked a new secret; the secret it had becomes its
   * previous one (and one replaced before is no longer kept). Answers the key after, or undefined.
   */
  rotate(accountId: string, keyId: string, rotation: KeyRotation): Promise<ActiveKey | undefined>;
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
