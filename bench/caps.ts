/**
 * The capped-keys phase: the money at daily caps across instances. Two accounts of ten live keys,
 * each key capped at CAP credits, send CALLS_PER_KEY image calls of one credit each, 32 at a time,
 * alternating between the gateway under test and a second instance on the same PostgreSQL and
 * Redis (one instance on the embedded database, which two cannot share). A client retries what
 * the contract says to retry in a second (`credits_in_flight`). Afterwards every key must have
 * spent exactly its cap, none past it (read from the database both instances share), and no
 * refusal may have been a 402 (the balance always covered the calls): each refusal names its
 * true reason.
 */
import type { Gateway } from '../src/gateway';
import { creditsToMicro } from '../src/domain/shared/money';
import { MAX_ACTIVE_KEYS } from '../src/domain/keys/key-service';

const CAP = 5;
const CALLS_PER_KEY = 10;
const CONCURRENCY = 32;

export interface CapsResult {
  instances: number;
  keys: number;
  calls: number;
  charged: number;
  refusals: Record<string, number>;
  keysAtCap: number;
  pastCap: number;
  ok: boolean;
}

export async function runCapsPhase(gateway: Gateway, urls: string[]): Promise<CapsResult> {
  const secrets: string[] = [];
  const keyIds: string[] = [];
  for (let a = 0; a < 2; a++) {
    const account = await gateway.accounts.findOrCreate({ issuer: 'urn:svc:bench', subject: `bench-caps-${a}-${Date.now()}` });
    await gateway.database.db.transaction((tx) =>
      gateway.services.ledger.grant(tx, { accountId: account.id, amountMicro: creditsToMicro(1_000), reason: 'bench' }),
    );
    for (let k = 0; k < MAX_ACTIVE_KEYS; k++) {
      const made = await gateway.keys.create(account.id, { name: `caps ${k}`, mode: 'live', dailySpendCap: CAP });
      secrets.push(made.secret);
      keyIds.push(made.key.id);
    }
  }
  const body = JSON.stringify({ model: 'svc-creative-v8', prompt: 'a tile', size: '64x64' });
  const refusals: Record<string, number> = {};
  let charged = 0;
  const jobs = secrets.flatMap((secret) => Array.from({ length: CALLS_PER_KEY }, () => secret));
  let next = 0;
  const client = async () => {
    for (let i = next++; i < jobs.length; i = next++) {
      for (let attempt = 0; attempt < 50; attempt++) {
        const res = await fetch(`${urls[(i + attempt) % urls.length]}/v1/images/generations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${jobs[i]}`, 'content-type': 'application/json' },
          body,
        });
        const out = (await res.json()) as { error?: { type: string; code: string | null } };
        if (res.status === 200) {
          charged++;
          break;
        }
        const reason = `${res.status} ${out.error?.code ?? out.error?.type}`;
        refusals[reason] = (refusals[reason] ?? 0) + 1;
        if (out.error?.code !== 'credits_in_flight') break;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, client));
  await gateway.services.leaseBook.returnIdleNow();
  const spent = await gateway.database.db.all<{ api_key_id: string; spent_micro: string | number }>(
    `select api_key_id, spent_micro from key_daily_spend where api_key_id = any(?::text[])`,
    [keyIds],
  );
  const keysAtCap = spent.filter((s) => Number(s.spent_micro) === creditsToMicro(CAP)).length;
  const pastCap = spent.filter((s) => Number(s.spent_micro) > creditsToMicro(CAP)).length;
  const onlyTrueReasons = Object.keys(refusals).every((r) => r === '429 daily_cap_exceeded' || r === '429 credits_in_flight');
  return {
    instances: urls.length,
    keys: keyIds.length,
    calls: jobs.length,
    charged,
    refusals,
    keysAtCap,
    pastCap,
    ok: pastCap === 0 && keysAtCap === keyIds.length && charged === keyIds.length * CAP && onlyTrueReasons,
  };
}

export function renderCapsMarkdown(c: CapsResult): string {
  return [
    '',
    '## Daily caps across instances',
    '',
    `${c.keys} live keys capped at ${CAP} credits, ${c.calls} one-credit image calls, ${CONCURRENCY} at a time over ${c.instances} instance(s); a client retries \`credits_in_flight\`.`,
    '',
    `Charged ${c.charged} (the caps: ${c.keys * CAP}); keys at their cap ${c.keysAtCap} of ${c.keys}; past cap ${c.pastCap}; refusals ${JSON.stringify(c.refusals)}. ${c.ok ? 'Exact.' : '**WRONG**.'}`,
    '',
  ].join('\n');
}
