import { z } from 'zod';
import { parseInput } from '../domain/shared/validate';
import { MAX_LEDGER_PAGE } from '../domain/history/ledger-entries';

/**
 * The paging arguments of GraphQL's lists (`first`, and `after` where the list has a cursor),
 * one check for all of them: `first` out of its range or an `after` that is not a cursor of the
 * list is an invalid_request_error naming the argument (`param: "first"`, `"after"`), as REST's
 * `first` and `after` query parameters are. Refused before any work, so nothing is read or charged.
 */
export class PageRule {
  private readonly schema: z.ZodType<{ first: number; after?: string }>;

  constructor(
    readonly max: number,
    readonly byDefault: number,
    /** What a cursor of this list looks like; none: the list takes no `after`. */
    cursor?: { pattern: RegExp; of: string },
  ) {
    this.schema = z
      .object({
        first: z.coerce.number().int().min(1).max(max).default(byDefault),
        after: (cursor ? z.string().regex(cursor.pattern, `must be the cursor of ${cursor.of}`) : z.never()).optional(),
      })
      .strict();
  }

  /** The page asked for, or a DomainError (invalid_request_error) naming the argument. Null means omitted. */
  check(args: { first?: number | null; after?: string | null }): { first: number; after?: string } {
    const given = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined && v !== null));
    return parseInput(this.schema, given);
  }

  /** The page size the cost bound weighs (computed before `check` runs, so clamped rather than refused). */
  size(first: unknown): number {
    return Math.min(Math.max(typeof first === 'number' ? first : this.byDefault, 1), this.max);
  }
}

/** `ledgerEntries`: as GET /account/ledger-entries (the cursor is an entry id). */
export const LEDGER_PAGE = new PageRule(MAX_LEDGER_PAGE, 20, { pattern: /^\d{1,18}$/, of: 'an entry' });

/** `videoJobs`: the cursor is a job id (`vid_…`). */
export const VIDEO_JOB_PAGE = new PageRule(100, 20, { pattern: /^vid_[A-Za-z0-9]{1,64}$/, of: 'a job' });

/** `webhookDeliveries`: no cursor; the domain calls the page size `limit`, the argument is `first`. */
export const DELIVERY_PAGE = new PageRule(500, 100);
