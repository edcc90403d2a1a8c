import type { Database, SqlExecutor } from '../../../domain/ports/database';
import type { ApiKey } from '../../../domain/keys/key-record';
import type { ActiveKey, KeyChanges, KeyHash, KeyRepository, KeyRotation, NewKey } from '../../../domain/keys/key-repository';
import type { StoredSecrets } from '../../../domain/keys/key-secrets';

interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  mode: 'live' | 'test';
  allowed_models: string[] | null;
  blocked_models: string[] | null;
  daily_spend_cap_micro: string | number | null;
  week_budget_micro: string | number | null;
  month_budget_micro: string | number | null;
  webhook_url: string | null;
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date | null;
  rotated_at: Date | null;
  previous_secret_until: Date | null;
}

interface SecretsRow {
  secret_hash: string;
  previous_secret_hash: string | null;
  previous_secret_until: Date | null;
}

const KEY_COLUMNS =
  'id, account_id, name, mode, allowed_models, blocked_models, daily_spend_cap_micro, week_budget_micro, month_budget_micro, webhook_url, created_at, last_used_at, expires_at, rotated_at, previous_secret_until';
const SECRET_COLUMNS = 'secret_hash, previous_secret_hash, previous_secret_until';

const microOrNull = (v: string | number | null) => (v === null ? null : Number(v));
const dateOrNull = (d: Date | null) => (d ? new Date(d) : null);
/** A moment as a bind parameter: RFC 3339 text, read the same by pg and PGlite. */
const moment = (d: Date | null | undefined) => d?.toISOString() ?? null;

const toApiKey = (r: ApiKeyRow): ApiKey => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  mode: r.mode,
  allowedModels: r.allowed_models,
  blockedModels: r.blocked_models,
  dailySpendCapMicro: microOrNull(r.daily_spend_cap_micro),
  weekBudgetMicro: microOrNull(r.week_budget_micro),
  monthBudgetMicro: microOrNull(r.month_budget_micro),
  webhookUrl: r.webhook_url,
  created: new Date(r.created_at),
  lastUsed: dateOrNull(r.last_used_at),
  expiresAt: dateOrNull(r.expires_at),
  rotatedAt: dateOrNull(r.rotated_at),
  previousSecretUntil: dateOrNull(r.previous_secret_until),
});

const toSecrets = (r: SecretsRow): StoredSecrets => ({
  secretHash: r.secret_hash,
  previousSecretHash: r.previous_secret_hash,
  previousSecretUntil: dateOrNull(r.previous_secret_until),
});

const modelList = (models: string[] | null | undefined) => (models ? JSON.stringify(models) : null);

/** The `api_keys` table's SQL. */
export class SqlKeyRepository implements KeyRepository {
  constructor(private readonly db: Database) {}

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async lockAccount(tx: SqlExecutor, accountId: string): Promise<void> {
    await tx.one(`select id from accounts where id = ? for update`, [accountId]);
  }

  async countActive(tx: SqlExecutor, accountId: string): Promise<number> {
    const active = await tx.one<{ n: string }>(`select count(*) as n from api_keys where account_id = ? and revoked_at is null`, [accountId]);
    return Number(active?.n ?? 0);
  }

  async insert(tx: SqlExecutor, key: NewKey): Promise<ApiKey> {
    const row = await tx.one<ApiKeyRow>(
      `insert into api_keys (id, account_id, name, mode, secret_hash, allowed_models, blocked_models, daily_spend_cap_micro, week_budget_micro, month_budget_micro, expires_at)
         values (?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?, ?) returning ${KEY_COLUMNS}`,
      [
        key.id,
        key.accountId,
        key.name,
        key.mode,
        key.secretHash,
        modelList(key.allowedModels),
        modelList(key.blockedModels),
        key.dailySpendCapMicro,
        key.weekBudgetMicro,
        key.monthBudgetMicro,
        moment(key.expiresAt),
      ],
    );
    return toApiKey(row!);
  }

  async listActive(accountId: string): Promise<ApiKey[]> {
    const rows = await this.db.all<ApiKeyRow>(`select ${KEY_COLUMNS} from api_keys where account_id = ? and revoked_at is null order by created_at desc, id`, [
      accountId,
    ]);
    return rows.map(toApiKey);
  }

  async findActive(accountId: string, keyId: string): Promise<ApiKey | undefined> {
    const row = await this.db.one<ApiKeyRow>(`select ${KEY_COLUMNS} from api_keys where id = ? and account_id = ? and revoked_at is null`, [keyId, accountId]);
    return row ? toApiKey(row) : undefined;
  }

  async update(accountId: string, keyId: string, changes: KeyChanges, tx: SqlExecutor = this.db): Promise<ApiKey | undefined> {
    const sets: string[] = [];
    const params: unknown[] = [];
    const set = (column: string, value: unknown) => {
      sets.push(column);
      params.push(value);
    };
    if (changes.name !== undefined) set('name = ?', changes.name);
    if ('allowedModels' in changes) set('allowed_models = ?::jsonb', modelList(changes.allowedModels));
    if ('blockedModels' in changes) set('blocked_models = ?::jsonb', modelList(changes.blockedModels));
    if ('dailySpendCapMicro' in changes) set('daily_spend_cap_micro = ?', changes.dailySpendCapMicro ?? null);
    if ('weekBudgetMicro' in changes) set('week_budget_micro = ?', changes.weekBudgetMicro ?? null);
    if ('monthBudgetMicro' in changes) set('month_budget_micro = ?', changes.monthBudgetMicro ?? null);
    if ('expiresAt' in changes) set('expires_at = ?', moment(changes.expiresAt));
    if (sets.length === 0) return this.findActive(accountId, keyId);
    const row = await tx.one<ApiKeyRow>(
      `update api_keys set ${sets.join(', ')} where id = ? and account_id = ? and revoked_at is null returning ${KEY_COLUMNS}`,
      [...params, keyId, accountId],
    );
    return row ? toApiKey(row) : undefined;
  }

  async rotate(accountId: string, keyId: string, rotation: KeyRotation): Promise<ActiveKey | undefined> {
    // The right-hand sides read the row as it was: the replaced secret is the one held before.
    const row = await this.db.one<ApiKeyRow & SecretsRow>(
      `update api_keys set
         previous_secret_hash = case when ?::timestamptz is null then null else secret_hash end,
         previous_secret_until = ?::timestamptz, secret_hash = ?, rotated_at = ?::timestamptz
       where id = ? and account_id = ? and revoked_at is null returning ${KEY_COLUMNS}, ${SECRET_COLUMNS}`,
      [moment(rotation.previousSecretUntil), moment(rotation.previousSecretUntil), rotation.secretHash, moment(rotation.rotatedAt), keyId, accountId],
    );
    return row ? { ...toApiKey(row), ...toSecrets(row) } : undefined;
  }

  async revoke(accountId: string, keyId: string): Promise<boolean> {
    const touched = await this.db.run(
      `update api_keys set revoked_at = now(), webhook_url = null, webhook_secret = null
       where id = ? and account_id = ? and revoked_at is null`,
      [keyId, accountId],
    );
    return touched > 0;
  }

  async clearWebhook(accountId: string, keyId: string): Promise<void> {
    await this.db.run(`update api_keys set webhook_url = null, webhook_secret = null where id = ? and account_id = ?`, [keyId, accountId]);
  }

  async setWebhook(accountId: string, keyId: string, url: string, secret: string): Promise<void> {
    await this.db.run(`update api_keys set webhook_url = ?, webhook_secret = ? where id = ? and account_id = ?`, [url, secret, keyId, accountId]);
  }

  async setWebhookSecret(accountId: string, keyId: string, secret: string): Promise<void> {
    await this.db.run(`update api_keys set webhook_secret = ? where id = ? and account_id = ?`, [secret, keyId, accountId]);
  }

  async findActiveKeys(ids: readonly string[]): Promise<ActiveKey[]> {
    const rows = await this.db.all<ApiKeyRow & SecretsRow>(
      `select ${KEY_COLUMNS}, ${SECRET_COLUMNS} from api_keys where id in (${ids.map(() => '?').join(', ')}) and revoked_at is null`,
      ids,
    );
    return rows.map((r) => ({ ...toApiKey(r), ...toSecrets(r) }));
  }

  async markUsed(ids: readonly string[]): Promise<void> {
    await this.db.run(`update api_keys set last_used_at = now() where id in (${ids.map(() => '?').join(', ')})`, ids);
  }

  async allActiveHashes(): Promise<KeyHash[]> {
    const rows = await this.db.all<{ id: string } & SecretsRow>(`select id, ${SECRET_COLUMNS} from api_keys where revoked_at is null`);
    return rows.map((r) => ({ id: r.id, ...toSecrets(r) }));
  }

  async activeHashesOf(ids: readonly string[]): Promise<KeyHash[]> {
    const rows = await this.db.all<{ id: string } & SecretsRow>(
      `select id, ${SECRET_COLUMNS} from api_keys where id in (${ids.map(() => '?').join(', ')}) and revoked_at is null`,
      ids,
    );
    return rows.map((r) => ({ id: r.id, ...toSecrets(r) }));
  }
}
