import { Router } from 'express';
import type { AccountHistory } from '../../domain/history/account-history';
import { accountIdOf } from '../auth';

/** The delivery log an owner sees: a key's and the account's (operators' is /admin/webhook-deliveries, admin-routes.ts). */
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
