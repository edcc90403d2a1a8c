import type { TestGateway } from './gateway-harness';
import { pollUntil } from './poll';

/** Waits until every call of the account is billed on this gateway (reservations settled, charges committed). */
export async function allCallsBilled(gw: TestGateway, accountId: string): Promise<void> {
  await pollUntil(
    async () => gw.gateway.services.leaseBook.inFlightFor(accountId),
    (n) => n === 0,
    5_000,
    10,
  );
}
