/**
 * What a read of the request log may ask, checked here once for both doors: the filters
 * (`keyId`, `model`, `status`, `outcome`, `from`, `to`), the page (`first` 1 to 100, 20 by default; `after`,
 * an opaque cursor) and the export's `format`. A refusal is a 400 naming the argument.
 */
import { z } from 'zod';
import { invalidField } from '../errors/domain-error';
import { PageRule } from '../shared/page-rule';
import { integerTextOrNumber } from '../shared/integer-text';
import { parseInput } from '../shared/validate';
import type { RequestLogCursor, RequestLogFilter } from './request-log-repository';

/** A page of the log: 20 rows by default, 100 at most; `after` is the cursor a page answered. */
export const REQUEST_LOG_PAGE = new PageRule(100, 20, { pattern: /^[A-Za-z0-9_-]{1,200}$/, of: 'a page of the request log' });

export type ExportFormat = 'csv' | 'jsonl';

const DAY_MS = 86_400_000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;
const UNIX_SECONDS = /^(0|[1-9]\d{0,11})$/;
/** PostgreSQL's timestamps end with year 9999; nothing was logged before 1970. */
const LAST_MS = Date.UTC(9999, 11, 31);

/**
 * A moment as a bound: an RFC 3339 date-time, Unix seconds, or a UTC day (YYYY-MM-DD), which as
 * `from` is its first millisecond and as `to` its last, so a day given as both reads that day.
 */
const instant = (end: 'from' | 'to') =>
  z.union([z.string(), z.number()]).transform((v, ctx) => {
    const text = String(v);
    let ms = Number.NaN;
    if (UNIX_SECONDS.test(text)) ms = Number(text) * 1000;
    else if (DAY.test(text)) {
      const start = Date.parse(`${text}T00:00:00Z`);
      if (!Number.isNaN(start) && new Date(start).toISOString().startsWith(text)) ms = end === 'from' ? start : start + DAY_MS - 1;
    } else if (RFC3339.test(text)) ms = Date.parse(text.replace(' ', 'T'));
    if (Number.isNaN(ms) || ms < 0 || ms > LAST_MS) {
      ctx.addIssue({ code: 'custom', message: 'must be an RFC 3339 date-time, Unix seconds, or a day as YYYY-MM-DD' });
      return z.NEVER;
    }
    return ms;
  });

const filterFields = {
  keyId: z
    .string()
    .regex(/^svc_(live|test)_[A-Za-z0-9]{1,64}$/, 'must be an API key id')
    .optional(),
  model: z.string().min(1).max(100).optional(),
  status: integerTextOrNumber(100, 599).optional(),
  outcome: z.enum(['ok', 'error']).optional(),
  from: instant('from').optional(),
  to: instant('to').optional(),
};

const filterSchema = z.object(filterFields).strict();
const exportSchema = z.object({ ...filterFields, format: z.enum(['csv', 'jsonl']).default('csv') }).strict();

function checkedRange<T extends RequestLogFilter>(filter: T): T {
  if (filter.fromMs !== undefined && filter.toMs !== undefined && filter.fromMs > filter.toMs) throw invalidField(['from'], "must not be after 'to'.");
  return filter;
}

function toFilter(v: z.output<typeof filterSchema>): RequestLogFilter {
  return checkedRange({ keyId: v.keyId, model: v.model, status: v.status, outcome: v.outcome, fromMs: v.from, toMs: v.to });
}

/** A list read (the arguments given, none null): its filters, its page and the cursor it goes on from. */
export function readListQuery(input: Record<string, unknown>): { filter: RequestLogFilter; first: number; after?: RequestLogCursor } {
  const { first, after, ...rest } = input;
  const page = REQUEST_LOG_PAGE.check({ first, after });
  const filter = toFilter(parseInput(filterSchema, rest));
  return { filter, first: page.first, ...(page.after !== undefined ? { after: decodeCursor(page.after) } : {}) };
}

/** An export: its filters and its format. */
export function readExportQuery(input: Record<string, unknown>): { filter: RequestLogFilter; format: ExportFormat } {
  const v = parseInput(exportSchema, input);
  return { filter: toFilter(v), format: v.format };
}

/** Opaque to clients: the row's created time and id, base64url. */
export function encodeCursor(row: RequestLogCursor): string {
  return Buffer.from(`${row.createdMs}:${row.id}`).toString('base64url');
}

const CURSOR = /^(0|[1-9]\d{0,15}):(req_[A-Za-z0-9_-]{1,64})$/;

function decodeCursor(text: string): RequestLogCursor {
  const m = CURSOR.exec(Buffer.from(text, 'base64url').toString('utf8'));
  if (!m) throw invalidField(['after'], 'must be the cursor of a page of the request log.');
  return { createdMs: Number(m[1]), id: m[2] };
}
