/**
 * An in-memory KeyRepository: the `api_keys` rows as the SQL keeps them. Transactions run one at
 * a time (the account row's lock, for every account at once), and the repository's statements
 * can be counted, as a test of the key path counts its reads of the keys table.
 */
import type { SqlExecutor } from '../../../src/domain/ports/database';
import type { ApiKey } from '../../../src/domain/keys/key-record';
import type { ActiveKey, KeyChanges, KeyHash, KeyRepository, KeyRotation, NewKey } from '../../../src/domain/keys/key-repository';
import type { StoredSecrets } from '../../../src/domain/keys/key-secrets';

interface FakeKeyRow {
  key: ApiKey;
  secrets: StoredSecrets;
  webhookSecret: string | null;
  revoked: boolean;
}

/** The transaction handle the fake hands out: it runs no SQL. */
const NO_SQL = {} as SqlExecutor;

export class FakeKeyRepository implements KeyRepository {
  readonly rows = new Map<string, FakeKeyRow>();
  /** Reads of keys by id (what authentication and the key refresher ask). */
  keyReads = 0;
  private turn: Promise<unknown> = Promise.resolve();

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const run = this.turn.then(() => work(NO_SQL));
    this.turn = run.catch(() => undefined);
    return run;
  }

  async lockAccount(_tx: SqlExecutor, _accountId: string): Promise<void> {}

  async countActive(_tx: SqlExecutor, accountId: string): Promise<number> {
    return this.active().filter((r) => r.key.accountId === accountId).length;
  }

  async insert(_tx: SqlExecutor, key: NewKey): Promise<ApiKey> {
    const { secretHash, ...fields } = key;
    const row: FakeKeyRow = {
      key: { ...fields, webhookUrl: null, created: new Date(), lastUsed: null, rotatedAt: null, previousSecretUntil: null },
      secrets: { secretHash, previousSecretHash: null, previousSecretUntil: null },
      webhookSecret: null,
      revoked: false,
    };
    this.rows.set(key.id, row);
    return { ...row.key };
  }

  async listActive(accountId: string): Promise<ApiKey[]> {
    return this.active()
      .filter((r) => r.key.accountId === accountId)
      .reverse()
      .map((r) => ({ ...r.key }));
  }

  async findActive(accountId: string, keyId: string): Promise<ApiKey | undefined> {
    const row = this.activeOf(accountId, keyId);
    return row ? { ...row.key } : undefined;
  }

  async update(accountId: string, keyId: string, changes: KeyChanges): Promise<ApiKey | undefined> {
    const row = this.activeOf(accountId, keyId);
    if (!row) return undefined;
    row.key = { ...row.key, ...changes };
    return { ...row.key };
  }

  async rotate(accountId: string, keyId: string, rotation: KeyRotation): Promise<ActiveKey | undefined> {
    const row = this.activeOf(accountId, keyId);
    if (!row) return undefined;
    const kept = rotation.previousSecretUntil !== null;
    row.secrets = {
      secretHash: rotation.secretHash,
      previousSecretHash: kept ? row.secrets.secretHash : null,
      previousSecretUntil: rotation.previousSecretUntil,
    };
    row.key = { ...row.key, rotatedAt: rotation.rotatedAt, previousSecretUntil: rotation.previousSecretUntil };
    return { ...row.key, ...row.secrets };
  }

  async revoke(accountId: string, keyId: string): Promise<boolean> {
    const row = this.activeOf(accountId, keyId);
    if (!row) return false;
    row.revoked = true;
    row.key.webhookUrl = null;
    row.webhookSecret = null;
    return true;
  }

  async clearWebhook(accountId: string, keyId: string): Promise<void> {
    this.setHook(accountId, keyId, null, null);
  }

  async setWebhook(accountId: string, keyId: string, url: string, secret: string): Promise<void> {
    this.setHook(accountId, keyId, url, secret);
  }

  async setWebhookSecret(accountId: string, keyId: string, secret: string): Promise<void> {
    const row = this.rows.get(keyId);
    if (row && row.key.accountId === accountId) row.webhookSecret = secret;
  }

  async findActiveKeys(ids: readonly string[]): Promise<ActiveKey[]> {
    this.keyReads++;
    return this.active()
      .filter((r) => ids.includes(r.key.id))
      .map((r) => ({ ...r.key, ...r.secrets }));
  }

  async markUsed(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const row = this.rows.get(id);
      if (row) row.key.lastUsed = new Date();
    }
  }

  async allActiveHashes(): Promise<KeyHash[]> {
    return this.active().map((r) => ({ id: r.key.id, ...r.secrets }));
  }

  async activeHashesOf(ids: readonly string[]): Promise<KeyHash[]> {
    return (await this.allActiveHashes()).filter((h) => ids.includes(h.id));
  }

  /** The webhook secret a key holds now (null: none). */
  webhookSecretOf(keyId: string): string | null {
    return this.rows.get(keyId)?.webhookSecret ?? null;
  }

  private active(): FakeKeyRow[] {
    return [...this.rows.values()].filter((r) => !r.revoked);
  }

  private activeOf(accountId: string, keyId: string): FakeKeyRow | undefined {
    const row = this.rows.get(keyId);
    return row && !row.revoked && row.key.accountId === accountId ? row : undefined;
  }

  private setHook(accountId: string, keyId: string, url: string | null, secret: string | null): void {
    const row = this.rows.get(keyId);
    if (!row || row.key.accountId !== accountId) return;
    row.key.webhookUrl = url;
    row.webhookSecret = secret;
  }
}
