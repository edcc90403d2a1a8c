import { z } from 'zod';
import { parseInput } from '../domain/shared/validate';
import { DEFAULT_LEDGER_PAGE, MAX_LEDGER_PAGE } from '../domain/history/ledger-entries';

/** Only the arguments that were given (GraphQL's null is REST's absent), so validation and `param` match REST. */
export function definedArgs(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined && v !== null));
}

/**
 * The paging arguments of GraphQL's lists (`first`, and `after` where the list has a cursor):
 * the page size the cost bound weighs, and, for the lists whose domain call does not check them
 * as REST's does (`ledgerEntries`' does), the check: `first` out of its range or an `after` that
 * is not a cursor of the list is an invalid_request_error naming the argument (`param: "first"`,
 * `"after"`). Refused before any work, so nothing is read or charged.
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
        first: z.coerce.number().min(1).max(max).int().default(byDefault),
        after: (cursor ? z.string().regex(cursor.pattern, `must be the cursor of ${cursor.of}`) : z.never()).optional(),
      })
      .strict();
  }

  /** The page asked for, or a DomainError (invalid_request_error) naming the argument. Null means omitted. */
  check(args: { first?: number | null; after?: string | null }): { first: number; after?: string } {
    return parseInput(this.schema, definedArgs(args));
  }

  /** The page size the cost bound weighs (computed before `check` runs, so clamped rather than refused). */
  size(first: unknown): number {
    return Math.min(Math.max(typeof first === 'number' ? first : this.byDefault, 1), this.max);
  }
}

/** `ledgerEntries`: its page size for the cost bound. The domain checks its arguments itself, as for GET /account/ledger-entries. */
export const LEDGER_PAGE = new PageRule(MAX_LEDGER_PAGE, DEFAULT_LEDGER_PAGE);

/** `videoJobs`: the cursor is a job id (`vid_…`). */
export const VIDEO_JOB_PAGE = new PageRule(100, 20, { pattern: /^vid_[A-Za-z0-9]{1,64}$/, of: 'a job' });

/** `webhookDeliveries`: no cursor; the domain calls the page size `limit`, the argument is `first`. */
export const DELIVERY_PAGE = new PageRule(500, 100);
