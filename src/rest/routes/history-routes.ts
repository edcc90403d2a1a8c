import { Router } from 'express';
import type { AccountHistory } from '../../domain/history/account-history';
import type { LedgerEntry } from '../../domain/history/ledger-entries';
import { unixSeconds } from '../../domain/shared/time';
import { accountIdOf } from '../auth';

const entryRecord = (e: LedgerEntry) => ({
  id: e.id,
  object: 'ledger_entry',
  kind: e.kind,
  credits: e.credits,
  reference: e.reference,
  keyId: e.keyId,
  model: e.model,
  reason: e.reason,
  created: unixSeconds(e.created),
});

/** GET /account/usage and GET /account/ledger-entries (ID-token authenticated by the caller). */
export function historyRoutes(history: AccountHistory): Router {
  const r = Router();

  r.get('/account/usage', async (req, res) => {
    const u = await history.usage(accountIdOf(res), { ...req.query });
    res.json({ object: 'list', from: u.from, to: u.to, groupBy: u.groupBy, data: u.buckets });
  });

  r.get('/account/ledger-entries', async (req, res) => {
    const page = await history.ledger(accountIdOf(res), { ...req.query });
    res.json({ object: 'list', data: page.entries.map(entryRecord), hasMore: page.hasNextPage, nextCursor: page.hasNextPage ? page.endCursor : null });
  });

  return r;
}
