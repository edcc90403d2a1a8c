import { z } from 'zod';
import { parseInput } from './validate';

/**
 * A list's page bounds, decided here once for both doors: `first` (its default and its most) and
 * `after` where the list has a cursor. `check` refuses `first` out of its range or an `after`
 * that is not a cursor of the list with an invalid_request_error naming the argument (`param:
 * "first"`, `"after"`), before any work; `size` is the page a request would get (what GraphQL's
 * cost bound weighs before the check runs).
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

  /** The page asked for, or a DomainError (invalid_request_error) naming the argument; an absent argument takes its default. */
  check(args: Record<string, unknown>): { first: number; after?: string } {
    return parseInput(this.schema, args);
  }

  /** The page size a request would get, clamped rather than refused. */
  size(first: unknown): number {
    return Math.min(Math.max(typeof first === 'number' ? first : this.byDefault, 1), this.max);
  }
}
