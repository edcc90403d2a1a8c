/**
 * An instance SIGKILLed while it relays a stream. Two gateway processes share PostgreSQL and
 * Redis; A answers a streamed chat (200, the first content event out) from an upstream that then
 * holds the rest, and is killed. After the lease grace B closes A's lease, and the cut stream is
 * charged its prompt and the content it relayed, as a client that left would be, never free. A
 * stream that A finished before the kill is charged too, and each of the two once.
 * Runs in CI's PostgreSQL + Redis pass.
 */
import { pollUntil } from '../support/poll';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { startTwoGateways, type TwoGateways } from '../support/two-gateways';
import type { ChildGateway } from '../support/child-gateway';
import { openDatabase } from '../../src/infra/db/orm';

const shared = process.env.DATABASE_URL && process.env.REDIS_URL ? describe : describe.skip;
vi.setConfig({ testTimeout: 120_000 });

shared('a stream cut by the death of its instance', () => {
  let two: TwoGateways;
  beforeAll(async () => {
    two = await startTwoGateways('streamkill', { LEASE_GRACE_SECONDS: '2' });
  });
  afterAll(async () => {
    await two?.close();
  });

  test('after the grace the cut stream is charged its prompt, the finished one its cost, each once', async () => {
    const { a, upstream, databaseUrl, dataDir } = two;
    const liveKey = await two.liveKey();
    const stream = (target: ChildGateway) =>
      fetch(`${target.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'a long answer, please '.repeat(20) }], max_tokens: 64, stream: true }),
      });

    const check = await openDatabase({ databaseUrl, dataDir });
    try {
      // One stream A finishes before the kill.
      const finished = await stream(a);
      expect(finished.status).toBe(200);
      const finishedText = await finished.text();
      expect(finishedText).toContain('data: [DONE]');
      const finishedId = /"id":"(chatcmpl-[^"]+)"/.exec(finishedText)![1];

      upstream.setMode('held-stream');
      const cut = await stream(a);
      expect(cut.status).toBe(200);
      const reader = cut.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      const cutId = /"id":"(chatcmpl-[^"]+)"/.exec(first)![1];
      // The stream runs on, held upstream, until A has recorded it as answering (written after
      // 50 ms, at the next 25 ms tick): a fixed 200 ms sleep did not always outlast that write on a
      // loaded machine.
      const startRows = async () => Number((await check.db.one<{ n: string }>(`select count(*) as n from stream_starts where request_id = ?`, [cutId]))!.n);
      await pollUntil(startRows, (n) => n > 0, 10_000, 25);
      await a.kill();
      await reader.read().catch(() => undefined);

      const chargedOf = async (id: string) => {
        const c = await check.db.one<{ n: string }>(`select coalesce(sum(amount_micro), 0) as n from lease_charges where request_id = ?`, [id]);
        const e = await check.db.one<{ n: string }>(`select coalesce(-sum(amount_micro), 0) as n from ledger_entries where kind = 'charge' and reference = ?`, [
          id,
        ]);
        return Number(c!.n) + Number(e!.n);
      };
      // B closes A's leases once A has missed the grace, and charges the cut stream then.
      const cutCharge = await pollUntil(
        () => chargedOf(cutId),
        (n) => n > 0,
        30_000,
        250,
      );
      expect(cutCharge).toBeGreaterThan(0);
      expect(await chargedOf(finishedId)).toBeGreaterThan(0);
      const rows = await check.db.one<{ n: string }>(`select count(*) as n from lease_charges where request_id in (?, ?)`, [cutId, finishedId]);
      expect(Number(rows!.n)).toBe(2);
      await expectLedgerInvariants(check.db);
    } finally {
      await check.close();
    }
  });
});
