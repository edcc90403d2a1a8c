import { NO_BUDGETS, type Budgets } from '../credits/budgets';
import { microToCredits } from '../shared/money';
import { unixSeconds } from '../shared/time';
import type { KeyPrincipal } from './principal';
import type { KeyOverview, KeySpend } from './key-spend';

export interface ApiKey {
  id: string;
  accountId: string;
  name: string;
  mode: 'live' | 'test';
  allowedModels: string[] | null;
  blockedModels: string[] | null;
  /** The day's budget. */
  dailySpendCapMicro: number | null;
  weekBudgetMicro: number | null;
  monthBudgetMicro: number | null;
  webhookUrl: string | null;
  created: Date;
  lastUsed: Date | null;
  /** From then on the key answers 401 `api_key_expired`; null: never. */
  expiresAt: Date | null;
  /** When its secret was last replaced; null: never. */
  rotatedAt: Date | null;
  /** Until then the secret its last rotation replaced is still taken; null: none is. */
  previousSecretUntil: Date | null;
}

/** The key's budgets per period, in micro-credits (the day's is its daily cap). */
export const budgetsOf = (key: ApiKey): Budgets => ({ day: key.dailySpendCapMicro, week: key.weekBudgetMicro, month: key.monthBudgetMicro });

/** What a request authenticated with this key may do. */
export function principalOf(key: ApiKey): KeyPrincipal {
  return {
    kind: 'key',
    keyId: key.id,
    accountId: key.accountId,
    mode: key.mode,
    allowedModels: key.allowedModels,
    blockedModels: key.blockedModels,
    budgets: key.mode === 'live' ? budgetsOf(key) : NO_BUDGETS,
    ...(key.expiresAt ? { usableUntil: key.expiresAt.getTime() } : {}),
  };
}

/** A key's budgets and what it spent, in credits: each budget with its period's spend and end (RFC 3339), and the spend of each period. */
export function spendRecord(s: KeySpend) {
  return {
    budgets: s.budgets.map((b) => ({
      period: b.period,
      credits: microToCredits(b.creditsMicro),
      spent: microToCredits(b.spentMicro),
      resetsAt: b.resetsAt.toISOString(),
    })),
    spend: { today: microToCredits(s.spend.day), week: microToCredits(s.spend.week), month: microToCredits(s.spend.month) },
  };
}

/** GET /v1/key: the calling key about itself. */
export function keyOverviewRecord(o: KeyOverview) {
  const k = o.key;
  return {
    id: k.id,
    name: k.name,
    mode: k.mode,
    allowedModels: k.allowedModels,
    blockedModels: k.blockedModels,
    // RFC 3339, as in the key record.
    expiresAt: k.expiresAt?.toISOString() ?? null,
    ...spendRecord(o.spending),
    accountBalance: microToCredits(o.accountBalanceMicro),
    rateLimits: o.rateLimits,
  };
}

/** The key record of CONTRACT.md; written field by field so no hash or secret can slip out. */
export function keyRecord(k: ApiKey, spending: KeySpend) {
  return {
    id: k.id,
    object: 'api_key' as const,
    name: k.name,
    mode: k.mode,
    allowedModels: k.allowedModels,
    blockedModels: k.blockedModels,
    dailySpendCap: k.dailySpendCapMicro === null ? null : microToCredits(k.dailySpendCapMicro),
    ...spendRecord(spending),
    webhook: k.webhookUrl ? { url: k.webhookUrl } : null,
    created: unixSeconds(k.created),
    lastUsed: k.lastUsed ? unixSeconds(k.lastUsed) : null,
    // RFC 3339, as `expiresAt` is written in requests.
    expiresAt: k.expiresAt?.toISOString() ?? null,
    rotatedAt: k.rotatedAt?.toISOString() ?? null,
    previousSecretUntil: k.previousSecretUntil?.toISOString() ?? null,
  };
}
