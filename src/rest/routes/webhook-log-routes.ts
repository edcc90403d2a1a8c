import { z } from 'zod';
import { Router } from 'express';
import type { AccountHistory } from '../../domain/history/account-history';
import { DELIVERY_PAGE } from '../../domain/webhooks/delivery-log';
import type { WebhookRepository } from '../../domain/webhooks/webhook-repository';
import { accountIdOf } from '../auth';
import { parseInput } from '../../domain/shared/validate';

const adminQuery = z.object({ keyId: z.string().max(100).optional(), jobId: z.string().max(100).optional() }).strict();

/** The delivery log: owners see their key's and their account's; operators filter by key and/or job. */
export function accountDeliveryRoutes(history: AccountHistory): Router {
  const r = Router();
  r.get('/account/webhook/deliveries', async (req, res) => {
    res.json({ object: 'list', data: await history.accountDeliveries(accountIdOf(res), { ...req.query }) });
  });
  r.get('/account/api-keys/:id/webhook/deliveries', async (req, res) => {
    res.json({ object: 'list', data: await history.deliveries(accountIdOf(res), req.params.id, { ...req.query }) });
  });
  return r;
}

export function adminDeliveryRoutes(webhooks: Pick<WebhookRepository, 'listDeliveries'>): Router {
  const r = Router();
  r.get('/admin/webhook-deliveries', async (req, res) => {
    // Strict as /account's queries are: a misspelt filter (`keyid=`) listed every delivery.
    const q = parseInput(adminQuery, { ...req.query });
    res.json({ object: 'list', data: await webhooks.listDeliveries({ keyId: q.keyId || undefined, jobId: q.jobId || undefined, limit: DELIVERY_PAGE.max }) });
  });
  return r;
}
