import { Router } from 'express';
import type { AccountService, Account } from '../../domain/accounts/account-service';
import type { AccountWebhook } from '../../domain/accounts/account-webhook';
import type { KeyService } from '../../domain/keys/key-service';
import type { KeySpending } from '../../domain/keys/key-spend';
import { keyRecord } from '../../domain/keys/key-record';
import { microToCredits } from '../../domain/shared/money';
import { unixSeconds } from '../../domain/shared/time';
import { accountIdOf } from '../auth';
import { jsonBody } from '../json-body';

export function accountRecord(a: Account) {
  return {
    id: a.id,
    balance: microToCredits(a.balanceMicro),
    member: a.member,
    created: unixSeconds(a.created),
    lowBalanceAlert: a.lowBalanceAlertMicro === null ? null : microToCredits(a.lowBalanceAlertMicro),
    webhook: a.webhookUrl ? { url: a.webhookUrl } : null,
  };
}

/** The answer to a webhook change (a key's or the account's): its secret only when one was made. */
const webhookAnswer = (result: { url: string | null; secret?: string }) =>
  result.secret ? { ok: true, url: result.url, secret: result.secret } : { ok: true, url: result.url };

/** /account, its webhook and /account/api-keys (ID-token authenticated by the caller of this router). */
export function accountRoutes(deps: { accounts: AccountService; accountWebhook: AccountWebhook; keys: KeyService; spending: KeySpending }): Router {
  const json = jsonBody();
  const r = Router();

  r.get('/account', async (_req, res) => {
    res.json(accountRecord(await deps.accounts.get(accountIdOf(res))));
  });

  r.patch('/account', json, async (req, res) => {
    res.json(accountRecord(await deps.accounts.update(accountIdOf(res), req.body)));
  });

  r.patch('/account/webhook', json, async (req, res) => {
    res.json(webhookAnswer(await deps.accountWebhook.configure(accountIdOf(res), req.body)));
  });

  r.get('/account/api-keys', async (_req, res) => {
    const keys = await deps.keys.list(accountIdOf(res));
    const spending = await deps.spending.of(keys);
    res.json({ object: 'list', data: keys.map((k) => keyRecord(k, spending.get(k.id)!)) });
  });

  r.post('/account/api-keys', json, async (req, res) => {
    const { key, secret } = await deps.keys.create(accountIdOf(res), req.body);
    res.status(201).json({ ...keyRecord(key, await deps.spending.ofOne(key)), key: secret });
  });

  r.patch('/account/api-keys/:id', json, async (req, res) => {
    const key = await deps.keys.update(accountIdOf(res), String(req.params.id), req.body);
    res.json(keyRecord(key, await deps.spending.ofOne(key)));
  });

  r.post('/account/api-keys/:id/rotate', json, async (req, res) => {
    const { key, secret } = await deps.keys.rotate(accountIdOf(res), String(req.params.id), req.body);
    res.json({ ...keyRecord(key, await deps.spending.ofOne(key)), key: secret });
  });

  r.delete('/account/api-keys/:id', async (req, res) => {
    await deps.keys.revoke(accountIdOf(res), req.params.id);
    res.json({ id: req.params.id, deleted: true });
  });

  r.patch('/account/api-keys/:id/webhook', json, async (req, res) => {
    res.json(webhookAnswer(await deps.keys.configureWebhook(accountIdOf(res), String(req.params.id), req.body)));
  });

  return r;
}
