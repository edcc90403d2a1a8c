/**
 * The export of 100,000 rows streams in constant memory: the database is read a chunk at a time
 * (keyset pages of at most EXPORT_CHUNK_ROWS), and while the client reads nothing the gateway
 * waits for the socket, holding at most about one chunk's text, with most of the log not yet
 * read; once the client reads on, every row arrives once, newest first.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';
import type { RequestLogRow } from '../../src/domain/requests/call-log';
import { EXPORT_CHUNK_ROWS } from '../../src/domain/requests/request-log';
import { SqlRequestLog } from '../../src/infra/db/repositories/sql-request-log';

const gw = useTestGateway();
const ROWS = 100_000;

test('100,000 rows: read in chunks, held back while the client reads nothing, every row delivered once', async () => {
  const acct = await gw.newAccount();
  const key = await gw.newKey(acct, { mode: 'test' });
  const repository = new SqlRequestLog(gw.gateway.database.db);
  const start = Date.now() - ROWS;
  for (let i = 0; i < ROWS; i += 5000) {
    const batch = Array.from({ length: 5000 }, (_, j): RequestLogRow => ({
      id: `req_export${String(i + j).padStart(8, '0')}`,
      createdMs: start + i + j,
      accountId: acct.id,
      keyId: key.id,
      endpoint: '/v1/chat/completions',
      idempotencyKey: null,
      model: 'svc-chat-1',
      status: 200,
      creditsMicro: 1000,
      promptTokens: 12,
      completionTokens: 30,
      images: 0,
      seconds: 0,
      latencyMs: 3,
      errorType: null,
      errorCode: null,
      jobId: null,
    }));
    await repository.insert(batch);
  }

  // What the gateway reads from the database, and the export's response on the server side.
  const pages: number[] = [];
  const original = SqlRequestLog.prototype.page;
  const spied = vi.spyOn(SqlRequestLog.prototype, 'page').mockImplementation(async function (this: SqlRequestLog, ...args: Parameters<SqlRequestLog['page']>) {
    const rows = await original.apply(this, args);
    pages.push(rows.length);
    return rows;
  });
  let response: ServerResponse | undefined;
  const capture = (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/account/requests/export')) response = res;
  };
  gw.gateway.server.prependListener('request', capture);
  try {
    const res = await fetch(`${gw.url}/account/requests/export?format=csv`, { headers: { authorization: `Bearer ${acct.idToken}` } });
    expect(res.status).toBe(200);
    // The client reads nothing: the gateway stops at a full socket, waiting for it to drain.
    await pollUntil(
      async () => response?.listenerCount('drain') ?? 0,
      (n) => n > 0,
      30_000,
      10,
    );
    const chunkText = 200 * EXPORT_CHUNK_ROWS;
    expect(response!.writableLength).toBeLessThan(2 * chunkText);
    expect(pages.reduce((a, b) => a + b, 0)).toBeLessThan(ROWS / 2);
    expect(Math.max(...pages)).toBeLessThanOrEqual(EXPORT_CHUNK_ROWS);

    // Read on: every row once, newest first.
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let rest = '';
    let lines = 0;
    let last = '';
    let ordered = true;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const text = rest + decoder.decode(value, { stream: true });
      const parts = text.split('\r\n');
      rest = parts.pop()!;
      for (const line of parts) {
        lines++;
        if (lines === 1) continue;
        const id = line.slice(0, line.indexOf(','));
        if (last !== '' && id >= last) ordered = false;
        last = id;
      }
    }
    expect(rest).toBe('');
    expect(lines).toBe(ROWS + 1);
    expect(ordered).toBe(true);
    expect(pages.reduce((a, b) => a + b, 0)).toBe(ROWS);
    expect(pages.length).toBeGreaterThanOrEqual(ROWS / EXPORT_CHUNK_ROWS);
  } finally {
    gw.gateway.server.off('request', capture);
    spied.mockRestore();
  }
});
