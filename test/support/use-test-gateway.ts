import { useFixture } from './fixture';
import { startTestGateway, type TestGateway } from './gateway-harness';
import { expectLedgerInvariants } from './ledger-invariants';
import type { Clock } from '../../src/domain/ports/clock';

type Env = Record<string, string | undefined>;

/**
 * One test gateway for a file (or a describe block): started before its tests, and after them
 * checked for the ledger's invariants (every balance the sum of its entries, none below zero,
 * nothing refunded twice, every closed lease settled) and closed. `env` may be a function, for
 * settings known only once a fake upstream has started in an earlier `beforeAll`. `clock`: what the
 * gateway keeps time with (a fake one the test steps; the system's by default).
 */
export function useTestGateway(env: Env | (() => Env | Promise<Env>) = {}, options: { ledgerInvariants?: boolean; clock?: Clock } = {}): TestGateway {
  return useFixture(
    'useTestGateway',
    async () => startTestGateway(typeof env === 'function' ? await env() : env, { clock: options.clock }),
    async (gw) => {
      try {
        if (options.ledgerInvariants !== false) await expectLedgerInvariants(gw.gateway.database.db);
      } finally {
        await gw.close();
      }
    },
  );
}
