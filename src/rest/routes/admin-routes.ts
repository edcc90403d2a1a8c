import { Router } from 'express';
import { z } from 'zod';
import type { AccountService } from '../../domain/accounts/account-service';
import { parseInput } from '../../domain/shared/validate';
import { microToCredits } from '../../domain/shared/money';
import { accountRecord } from './account-routes';
import { jsonBody } from '../json-body';

const memberBody = z.object({ member: z.boolean() }).strict();

/** Operator endpoints (ADMIN_TOKEN checked by the caller of this router). */
export function adminRoutes(deps: { accounts: AccountService }): Router {
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

  return r;
}
