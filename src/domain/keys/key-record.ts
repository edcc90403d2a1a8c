import { microToCredits } from '../shared/money';
import { unixSeconds } from '../shared/time';
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
  /** From then on the key answers 401 `api_key_expired`; null: never. */
  expiresAt: Date | null;
  /** When its secret was last replaced; null: never. */
  rotatedAt: Date | null;
}

/** What a request authenticated with this key may do. */
export function principalOf(key: ApiKey): KeyPrincipal {
  return {
    kind: 'key',
    keyId: key.id,
    accountId: key.accountId,
    mode: key.mode,
    allowedModels: key.allowedModels,
    blockedModels: key.blockedModels,
    dailySpendCapMicro: key.mode === 'live' ? key.dailySpendCapMicro : null,
    ...(key.expiresAt ? { usableUntil: key.expiresAt.getTime() } : {}),
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
    // RFC 3339, as `expiresAt` is written in requests.
    expiresAt: k.expiresAt?.toISOString() ?? null,
    rotatedAt: k.rotatedAt?.toISOString() ?? null,
  };
}
