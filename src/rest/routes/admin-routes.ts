import { Router } from 'express';
import { microToCredits } from '../../domain/shared/money';
import { unixSeconds } from '../../domain/shared/time';
import type { AuditEntry, AuditLog } from '../../domain/operators/audit-log';
import type { OperatorActions } from '../../domain/operators/operator-actions';
import type { OperatorReads } from '../../domain/operators/operator-reads';
import { accountRecord } from './account-routes';
import { jsonBody } from '../json-body';
import { operatorOf } from '../auth';

const auditRecord = (e: AuditEntry) => ({
  id: e.id,
  object: 'audit_entry',
  actor: e.actor,
  action: e.action,
  target: e.target,
  before: e.before,
  after: e.after,
  created: unixSeconds(e.created),
});

/** Operator endpoints (the operator authenticated by requireOperator before these run); every change is audited by OperatorActions. */
export function adminRoutes(deps: { actions: OperatorActions; reads: OperatorReads; audit: AuditLog }): Router {
  const json = jsonBody();
  const r = Router();

  r.post('/admin/accounts/:accountId/credits', json, async (req, res) => {
    const account = await deps.actions.grantCredits(operatorOf(res), String(req.params.accountId), req.body);
    res.json({ account: accountRecord(account), balance: microToCredits(account.balanceMicro) });
  });

  r.patch('/admin/accounts/:accountId', json, async (req, res) => {
    res.json(accountRecord(await deps.actions.setMember(operatorOf(res), String(req.params.accountId), req.body)));
  });

  r.get('/admin/webhook-deliveries', async (req, res) => {
    res.json({ object: 'list', data: await deps.reads.deliveries({ ...req.query }) });
  });

  r.get('/admin/upstreams', (_req, res) => {
    res.json({ object: 'list', data: deps.reads.upstreams() });
  });

  // A bad file is a 400 naming its field; the running catalog stays.
  r.post('/admin/catalog/reload', async (_req, res) => {
    res.json({ reloaded: true, ...(await deps.actions.reloadCatalog(operatorOf(res))) });
  });

  r.get('/admin/audit', async (req, res) => {
    const page = await deps.audit.list({ ...req.query });
    res.json({ object: 'list', data: page.entries.map(auditRecord), hasMore: page.hasNextPage, nextCursor: page.hasNextPage ? page.endCursor : null });
  });

  return r;
}
