import { Router } from 'express';
import type { Database } from '../../domain/ports/database';
import type { AccountHistory } from '../../domain/history/account-history';
import { listDeliveries } from '../../domain/webhooks/delivery-log';
import { accountIdOf } from '../auth';

/** The delivery log: owners see their key's; operators filter by key and/or job. */
export function accountDeliveryRoutes(history: AccountHistory): Router {
  const r = Router();
  r.get('/account/api-keys/:id/webhook/deliveries', async (req, res) => {
    res.json({ object: 'list', data: await history.deliveries(accountIdOf(res), req.params.id, { ...req.query }) });
  });
  return r;
}

export function adminDeliveryRoutes(db: Database): Router {
  const r = Router();
  r.get('/admin/webhook-deliveries', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const keyId = typeof q.keyId === 'string' && q.keyId ? q.keyId : undefined;
    const jobId = typeof q.jobId === 'string' && q.jobId ? q.jobId : undefined;
    res.json({ object: 'list', data: await listDeliveries(db, { keyId, jobId, limit: 500 }) });
  });
  return r;
}
