import type { SqlExecutor } from '../ports/database';
import { PageRule } from '../shared/page-rule';
import type { OperatorActor } from './operator-access';

/** What an operator did; each value names one kind of action, whichever door it came through. */
export type AuditAction = 'credits.grant' | 'credits.take_back' | 'account.member' | 'catalog.reload';

/**
 * The facts an entry keeps of its target before and after the action: flat values (a balance in
 * credits, a flag, a count, a reason), never a secret, a key's hash or an upstream's address.
 */
export type AuditState = Readonly<Record<string, string | number | boolean | null>>;

export interface AuditEntry {
  /** Increasing with each entry: the list's cursor. */
  id: string;
  actor: OperatorActor;
  action: AuditAction;
  /** What was acted on: an account id, or `catalog`. */
  target: string;
  before: AuditState | null;
  after: AuditState | null;
  created: Date;
}

export type NewAuditEntry = Omit<AuditEntry, 'id' | 'created'>;

export interface AuditPage {
  entries: AuditEntry[];
  hasNextPage: boolean;
  endCursor: string | null;
}

export interface AuditRepository {
  /** Writes the entry in `tx` when given, so it commits (or rolls back) with the action; else on its own. */
  insert(entry: NewAuditEntry, tx?: SqlExecutor): Promise<void>;
  /** Newest first, ids below `after`. */
  page(p: { after?: string; limit: number }): Promise<AuditEntry[]>;
}

/** The audit log's page bounds, for both doors: `first` 1 to 100 (20), `after` an entry's id. */
export const AUDIT_PAGE = new PageRule(100, 20, { pattern: /^\d{1,18}$/, of: 'an audit entry' });

/**
 * Every operator action, who did it, and its target before and after. Actions write their entry
 * through `record` inside their own transaction: an action that rolls back leaves no entry, and
 * one that commits always has its entry.
 */
export class AuditLog {
  constructor(private readonly repository: AuditRepository) {}

  record(entry: NewAuditEntry, tx?: SqlExecutor): Promise<void> {
    return this.repository.insert(entry, tx);
  }

  /** `{ first?, after? }`: newest first; `endCursor` is the next page's `after`. */
  async list(input: Record<string, unknown>): Promise<AuditPage> {
    const { first, after } = AUDIT_PAGE.check(input);
    const rows = await this.repository.page({ after, limit: first + 1 });
    const entries = rows.slice(0, first);
    return { entries, hasNextPage: rows.length > first, endCursor: entries.at(-1)?.id ?? null };
  }
}
