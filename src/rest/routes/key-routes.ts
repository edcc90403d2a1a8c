import { Router } from 'express';
import { keyOverviewRecord } from '../../domain/keys/key-record';
import type { KeySpending } from '../../domain/keys/key-spend';
import { keyOf } from '../auth';

/** GET /v1/key: the calling key about itself (its record, budgets and spend, its account's balance, its rate limits); not rate-limited. */
export function keyRoutes(spending: KeySpending): Router {
  const r = Router();
  r.get('/key', async (_req, res) => {
    res.json(keyOverviewRecord(await spending.overview(keyOf(res))));
  });
  return r;
}
