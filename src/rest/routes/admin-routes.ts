import { Router } from 'express';
import { z } from 'zod';
import type { AccountService } from '../../domain/accounts/account-service';
import { parseInput } from '../../domain/shared/validate';
import { microToCredits } from '../../domain/shared/money';
import { accountRecord } from './account-routes';
import { jsonBody } from '../json-body';
import type { Catalog } from '../../domain/catalog/catalog';
import type { CatalogReloader } from '../../domain/catalog/catalog-reload';
import type { CircuitBreakers } from '../../domain/routing/circuit-breaker';
import { upstreamsView } from '../../domain/routing/upstreams-view';

const memberBody = z.object({ member: z.boolean() }).strict();

/** Operator endpoints (ADMIN_TOKEN checked by the caller of this router). */
export function adminRoutes(deps: { accounts: AccountService; catalog: Catalog; catalogReload: CatalogReloader; breakers: CircuitBreakers }): Router {
  const json = jsonBody();
  const r = Router();

  r.post('/admin/accounts/:accountId/credits', json, async (req, res) => {
    const account = await deps.accounts.adjustCredits(String(req.params.accountId), req.body);
    res.json({ account: accountRecord(account), balance: microToCredits(account.balanceMicro) });
  });

  r.patch('/admin/accounts/:accountId', json, async (req, res) => {
    const v = parseInput(memberBody, req.body);
    res.json(accountRecord(await deps.accounts.setMember(String(req.params.accountId), v.member)));
  });

  r.get('/admin/upstreams', (_req, res) => {
    res.json(upstreamsView(deps.catalog.data, deps.breakers));
  });

  // A bad file is a 400 naming its field; the running catalog stays.
  r.post('/admin/catalog/reload', async (_req, res) => {
    res.json({ reloaded: true, ...(await deps.catalogReload.reload()) });
  });

  return r;
}
