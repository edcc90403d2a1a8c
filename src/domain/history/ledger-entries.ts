import { PageRule } from '../shared/page-rule';
import { z } from 'zod';
import type { SqlExecutor } from '../ports/database';
import type { EntryKind } from '../credits/ledger';
import { microToCredits } from '../shared/money';
import { parseInput } from '../shared/validate';
import { integerTextOrNumber } from '../shared/integer-text';

/** One ledger entry as an owner may see it: signed credits, what it paid for, which key and model. */
export interface LedgerEntry {
  id: string;
  kind: EntryKind;
  credits: number;
  reference: string | null;
  keyId: string | null;
  model: string | null;
  reason: string | null;
  created: Date;
}

export interface LedgerPage {
  entries: LedgerEntry[];
  hasNextPage: boolean;
  endCursor: string | null;
}

export const MAX_LEDGER_PAGE = 100;
export const DEFAULT_LEDGER_PAGE = 20;
/** The ledger's page bounds (its own schema checks REST's query; GraphQL weighs its cost by them). */
export const LEDGER_PAGE = new PageRule(MAX_LEDGER_PAGE, DEFAULT_LEDGER_PAGE);

const pageSchema = z
  .object({
    first: integerTextOrNumber(1, MAX_LEDGER_PAGE).default(DEFAULT_LEDGER_PAGE),
    after: z
      .string()
      .regex(/^\d{1,18}$/, 'must be the cursor of an entry')
      .optional(),
  })
  .strict();

interface Row {
  id: string | number;
  kind: EntryKind;
  amount_micro: string | number;
  reference: string | null;
  api_key_id: string | null;
  model: string | null;
  reason: string | null;
  created_at: Date | string;
}

/** The account's entries, newest first; `after` is the id of the last entry of the previous page. */
export async function ledgerEntries(db: SqlExecutor, accountId: string, input: unknown): Promise<LedgerPage> {
  const v = parseInput(pageSchema, input);
  // The statement a user reads: each call paid from a credit lease is a charge of its own (the
  // lease and its return are the gateway's bookkeeping, left out; a late charge's row of 0 is
  // too, its `charge` entry says what it cost), so the entries sum to the
  // balance shown. Both tables draw ids from one sequence, hence one order and one cursor.
  const after = v.after ? 'and id < ?::bigint' : '';
  const page = v.after ? [v.after] : [];
  const params = [accountId, ...page, accountId, ...page, v.first + 1];
  const rows = await db.all<Row>(
    `select * from (
       select id, kind, amount_micro, reference, api_key_id, model, reason, created_at from ledger_entries
        where account_id = ? and kind not in ('lease', 'lease_return') ${after}
       union all
       select id, 'charge', -amount_micro, request_id, api_key_id, model, null, created_at from lease_charges
        where account_id = ? and amount_micro > 0 ${after}) as statement
      order by id desc limit ?`,
    params,
  );
  const entries = rows.slice(0, v.first).map((r): LedgerEntry => ({
    id: String(r.id),
    kind: r.kind,
    credits: microToCredits(r.amount_micro),
    reference: r.reference,
    keyId: r.api_key_id,
    model: r.model,
    reason: r.reason,
    created: new Date(r.created_at),
  }));
  return { entries, hasNextPage: rows.length > v.first, endCursor: entries.at(-1)?.id ?? null };
}
