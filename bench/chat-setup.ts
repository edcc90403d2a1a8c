/**
 * What every chat phase of the bench sets up alike, in this process or in a gateway process of its
 * own (bench/outside.ts): the catalog that routes svc-chat-1 to the instant upstream, the two
 * request bodies, and the pool of live keys over accounts with credits to spare.
 */
import type { Gateway } from '../src/gateway';
import { BUILTIN_CATALOG } from '../src/domain/catalog/builtin-catalog';
import type { CatalogInput } from '../src/domain/catalog/model';
import { creditsToMicro } from '../src/domain/shared/money';
import { MAX_ACTIVE_KEYS } from '../src/domain/keys/key-service';

/** The upstream's API key, named by the catalog's route as BENCH_UPSTREAM_KEY (the direct phases send it too). */
export const UPSTREAM_KEY = 'sk-bench-upstream';
/** Each bench key's daily cap, so the money check's "no key past its cap" means something. */
export const KEY_CAP_CREDITS = 100_000;

const messages = [{ role: 'user', content: 'Say hello in five words.' }];
export const CHAT_BODIES = {
  plain: JSON.stringify({ model: 'svc-chat-1', messages, max_tokens: 16 }),
  streamed: JSON.stringify({ model: 'svc-chat-1', messages, max_tokens: 16, stream: true, stream_options: { include_usage: true } }),
};

/** The built-in catalog with svc-chat-1 routed to the instant upstream, and `more` models after it. */
export function benchCatalog(upstreamUrl: string, more: CatalogInput['models'] = []): CatalogInput {
  return {
    ...BUILTIN_CATALOG,
    models: BUILTIN_CATALOG.models
      .map((m) =>
        m.id === 'svc-chat-1'
          ? {
              ...m,
              route: {
                provider: 'openai-compatible' as const,
                upstreamModel: 'bench-chat',
                baseUrl: `${upstreamUrl}/v1`,
                apiKeyEnv: 'BENCH_UPSTREAM_KEY',
                timeoutSeconds: 30,
              },
            }
          : m,
      )
      .concat(more),
  };
}

/** Accounts with a large balance and MAX_ACTIVE_KEYS live keys each; answers the key secrets. */
export async function keyPool(gateway: Gateway, size: number): Promise<string[]> {
  const accounts = Math.ceil(size / MAX_ACTIVE_KEYS);
  const makeAccount = async (i: number): Promise<string[]> => {
    const account = await gateway.accounts.findOrCreate({ issuer: 'urn:svc:bench', subject: `bench-${i}` });
    await gateway.database.db.transaction((tx) =>
      gateway.services.ledger.grant(tx, { accountId: account.id, amountMicro: creditsToMicro(1_000_000), reason: 'bench' }),
    );
    const secrets: string[] = [];
    const n = Math.min(MAX_ACTIVE_KEYS, size - i * MAX_ACTIVE_KEYS);
    for (let k = 0; k < n; k++)
      secrets.push((await gateway.keys.create(account.id, { name: `bench ${k}`, mode: 'live', dailySpendCap: KEY_CAP_CREDITS })).secret);
    return secrets;
  };
  const perAccount: string[][] = [];
  for (let i = 0; i < accounts; i += 8) {
    perAccount.push(...(await Promise.all(Array.from({ length: Math.min(8, accounts - i) }, (_, j) => makeAccount(i + j)))));
  }
  // Interleave accounts, so consecutive requests never queue on one account's balance row.
  const pool: string[] = [];
  for (let k = 0; k < MAX_ACTIVE_KEYS; k++) for (const secrets of perAccount) if (secrets[k]) pool.push(secrets[k]);
  return pool;
}
