import type { Database, SqlExecutor } from '../../../domain/ports/database';
import type { AuditAction, AuditEntry, AuditRepository, AuditState, NewAuditEntry } from '../../../domain/operators/audit-log';
import type { OperatorActor } from '../../../domain/operators/operator-access';

interface Row {
  id: string | number;
  actor: OperatorActor;
  action: AuditAction;
  target: string;
  before: AuditState | string | null;
  after: AuditState | string | null;
  created_at: Date | string;
}

/** A driver may hand jsonb back as its text. */
const state = (v: AuditState | string | null): AuditState | null => (typeof v === 'string' ? (JSON.parse(v) as AuditState) : v);

/** The `audit_log` table's SQL. */
export class SqlAuditLog implements AuditRepository {
  constructor(private readonly db: Database) {}

  async insert(e: NewAuditEntry, tx: SqlExecutor = this.db): Promise<void> {
    await tx.run(`insert into audit_log (actor, action, target, before, after) values (?, ?, ?, ?::jsonb, ?::jsonb)`, [
      e.actor,
      e.action,
      e.target,
      e.before === null ? null : JSON.stringify(e.before),
      e.after === null ? null : JSON.stringify(e.after),
    ]);
  }

  async page(p: { after?: string; limit: number }): Promise<AuditEntry[]> {
    const rows = await this.db.all<Row>(
      `select id, actor, action, target, before, after, created_at from audit_log ${p.after ? 'where id < ?::bigint' : ''} order by id desc limit ?`,
      p.after ? [p.after, p.limit] : [p.limit],
    );
    return rows.map((r) => ({
      id: String(r.id),
      actor: r.actor,
      action: r.action,
      target: r.target,
      before: state(r.before),
      after: state(r.after),
      created: new Date(r.created_at),
    }));
  }
}
