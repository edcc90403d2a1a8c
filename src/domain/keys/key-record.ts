import { microToCredits } from '../shared/money';
import { unixSeconds } from '../shared/time';
import type { SqlExecutor } from '../ports/database';
import type { KeyPrincipal } from './principal';

export interface ApiKey {
  id: string;
  accountId: string;
  name: string;
  mode: 'live' | 'test';
  allowedModels: string[] | null;
  blockedModels: string[] | null;
  dailySpendCapMicro: number | null;
  webhookUrl: string | null;
  created: Date;
  lastUsed: Date | null;
}

export interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  mode: 'live' | 'test';
  allowed_models: string[] | null;
  blocked_models: string[] | null;
  daily_spend_cap_micro: string | number | null;
  webhook_url: string | null;
  created_at: Date;
  last_used_at: Date | null;
}

export const KEY_COLUMNS = 'id, account_id, name, mode, allowed_models, blocked_models, daily_spend_cap_micro, webhook_url, created_at, last_used_at';

export const toApiKey = (r: ApiKeyRow): ApiKey => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  mode: r.mode,
  allowedModels: r.allowed_models,
  blockedModels: r.blocked_models,
  dailySpendCapMicro: r.daily_spend_cap_micro === null ? null : Number(r.daily_spend_cap_micro),
  webhookUrl: r.webhook_url,
  created: new Date(r.created_at),
  lastUsed: r.last_used_at ? new Date(r.last_used_at) : null,
});

export type ActiveKeyRow = ApiKeyRow & { secret_hash: string };

/** The rows of those keys that are not revoked, with their secrets' hashes: what authentication reads. */
export function activeKeyRows(db: SqlExecutor, ids: readonly string[]): Promise<ActiveKeyRow[]> {
  return db.all<ActiveKeyRow>(`select ${KEY_COLUMNS}, secret_hash from api_keys where id in (${ids.map(() => '?').join(', ')}) and revoked_at is null`, ids);
}

/** What a request authenticated with this key may do. */
export function principalOf(row: ApiKeyRow): KeyPrincipal {
  const key = toApiKey(row);
  return {
    kind: 'key',
    keyId: key.id,
    accountId: key.accountId,
    mode: key.mode,
    allowedModels: key.allowedModels,
    blockedModels: key.blockedModels,
    dailySpendCapMicro: key.mode === 'live' ? key.dailySpendCapMicro : null,
  };
}

/** The key record of CONTRACT.md; written field by field so no hash or secret can slip out. */
export function keyRecord(k: ApiKey) {
  return {
    id: k.id,
    object: 'api_key' as const,
    name: k.name,
    mode: k.mode,
    allowedModels: k.allowedModels,
    blockedModels: k.blockedModels,
    dailySpendCap: k.dailySpendCapMicro === null ? null : microToCredits(k.dailySpendCapMicro),
    webhook: k.webhookUrl ? { url: k.webhookUrl } : null,
    created: unixSeconds(k.created),
    lastUsed: k.lastUsed ? unixSeconds(k.lastUsed) : null,
  };
}
