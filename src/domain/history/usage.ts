import { z } from 'zod';
import { invalidField } from '../errors/domain-error';
import { utcDay } from '../shared/time';
import { parseInput } from '../shared/validate';
import type { HistoryRepository } from './history-repository';

export type UsageGroupBy = 'day' | 'key' | 'model';

/** Credits spent on one UTC day (net of refunds), for one key or model when grouped by them. */
export interface UsageBucket {
  day: string;
  keyId: string | null;
  model: string | null;
  credits: number;
}

export interface UsageHistory {
  from: string;
  to: string;
  groupBy: UsageGroupBy;
  buckets: UsageBucket[];
}

export const MAX_USAGE_DAYS = 366;
export const DEFAULT_USAGE_DAYS = 30;
const DAY_MS = 86_400_000;

/**
 * The days a range may name. The query reads up to the day after `to`, and PostgreSQL's
 * timestamps end with year 9999 (9999-12-31 + 1 day would be a 500 with the SQL in the log);
 * nothing was charged before 1970.
 */
const FIRST_DAY = '1970-01-01';
const LAST_DAY = '9999-12-30';

const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date as YYYY-MM-DD')
  .refine((v) => !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) && utcDay(new Date(`${v}T00:00:00Z`)) === v, 'must be a real date')
  .refine((v) => v >= FIRST_DAY && v <= LAST_DAY, `must be a day from ${FIRST_DAY} to ${LAST_DAY}`);

const usageSchema = z
  .object({
    from: day.optional(),
    to: day.optional(),
    group_by: z.enum(['day', 'key', 'model']).default('day'),
  })
  .strict();

/** `from`/`to` are UTC days, both included; by default the 30 days that end today. */
export function parseUsageQuery(input: unknown, now = new Date()): { from: string; to: string; groupBy: UsageGroupBy } {
  const v = parseInput(usageSchema, input);
  const to = v.to ?? utcDay(now);
  const defaultFrom = utcDay(new Date(Date.parse(`${to}T00:00:00Z`) - (DEFAULT_USAGE_DAYS - 1) * DAY_MS));
  const from = v.from ?? (defaultFrom < FIRST_DAY ? FIRST_DAY : defaultFrom);
  const span = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
  if (span < 1) throw invalidField(['from'], "must not be after 'to'.");
  if (span > MAX_USAGE_DAYS) throw invalidField(['from'], `the range is at most ${MAX_USAGE_DAYS} days.`);
  return { from, to, groupBy: v.group_by };
}

/**
 * Spending from the ledger: charges (direct ones and those paid from credit leases) minus
 * refunds per UTC day (holds, leases and their returns are transient and left out). A refund
 * counts on the day of the charge it returns (same reference), with that charge's key and model:
 * a video charged at 23:59 and refunded after midnight nets to nothing on its day, instead of a
 * charge on one day and a negative day after it. Test keys never touch the ledger, so their
 * calls are not here.
 */
export async function usageHistory(history: HistoryRepository, accountId: string, input: unknown, now = new Date()): Promise<UsageHistory> {
  const q = parseUsageQuery(input, now);
  const until = new Date(Date.parse(`${q.to}T00:00:00Z`) + DAY_MS).toISOString();
  return { ...q, buckets: await history.spending(accountId, { since: `${q.from}T00:00:00Z`, until, groupBy: q.groupBy }) };
}
