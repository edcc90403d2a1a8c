import { PageRule } from '../shared/page-rule';
import { z } from 'zod';
import type { EntryKind } from '../credits/ledger';
import { parseInput } from '../shared/validate';
import { integerTextOrNumber } from '../shared/integer-text';
import type { HistoryRepository } from './history-repository';

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

/** The account's entries, newest first; `after` is the id of the last entry of the previous page. */
export async function ledgerEntries(history: HistoryRepository, accountId: string, input: unknown): Promise<LedgerPage> {
  const v = parseInput(pageSchema, input);
  const rows = await history.ledgerEntries(accountId, { after: v.after, limit: v.first + 1 });
  const entries = rows.slice(0, v.first);
  return { entries, hasNextPage: rows.length > v.first, endCursor: entries.at(-1)?.id ?? null };
}
