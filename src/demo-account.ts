import type { Gateway } from './gateway';
import { creditsToMicro } from './domain/shared/money';

const DEMO_SUBJECT = 'demo';
const DEMO_CREDITS = 1000;
const MARKER = 'demo_account_created';

/**
 * On a fresh data directory: a demo account with 1,000 credits, an ID token, a live key and a
 * test key, printed once to stdout (the only place a secret is ever written, by design).
 */
export async function ensureDemoAccount(gateway: Gateway, origin: string): Promise<void> {
  if (!gateway.devIdentity) return; // a real identity provider owns the accounts
  const { db } = gateway.database;
  const first = await db.run(`insert into server_secrets (name, value) values (?, ?) on conflict do nothing`, [MARKER, new Date().toISOString()]);
  if (first === 0) return;
  const account = await gateway.accounts.findOrCreate({ issuer: 'urn:svc:dev-idp', subject: DEMO_SUBJECT });
  await db.transaction((tx) => gateway.services.ledger.grant(tx, { accountId: account.id, amountMicro: creditsToMicro(DEMO_CREDITS), reason: 'demo account' }));
  const idToken = await gateway.devIdentity.issue(DEMO_SUBJECT, { expiresIn: '365d' });
  const live = await gateway.keys.create(account.id, { name: 'demo live key', mode: 'live' });
  const test = await gateway.keys.create(account.id, { name: 'demo test key', mode: 'test' });
  const lines = [
    '',
    '=== Demo account created (shown once) ===',
    `account:   ${account.id} (${DEMO_CREDITS} credits)`,
    `ID token:  ${idToken}`,
    `live key:  ${live.secret}`,
    `test key:  ${test.secret}`,
    '',
    'Try it:',
    `  curl -s ${origin}/v1/models -H "Authorization: Bearer ${live.secret}"`,
    `  curl -s ${origin}/account -H "Authorization: Bearer ${idToken}"`,
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
}
