/**
 * A second yardstick beside the bare pass-through: the same proxy, made to keep the gateway's one
 * money rule and nothing else. Each call's answer is read whole, a charge row for it is
 * committed to PostgreSQL (one insert, autocommitted, a prepared statement through `pg`), and only
 * then is the answer sent, as the gateway must record a charge before its response goes out.
 *
 * It shows what that rule alone costs on this machine: at one connection, the commit's wait (the
 * floor under the gateway's added latency, whatever else it does); at 32, what one commit per
 * call allows against the gateway's group commit. Only with DATABASE_URL (the embedded gateway
 * commits in its own thread, through PGlite). Runs in its own worker thread, like the bare one.
 */
import { createServer, type Server } from 'node:http';
import { Pool as HttpPool } from 'undici';
import { Pool as PgPool } from 'pg';

export async function createCommittingProxy(upstreamOrigin: string, databaseUrl: string): Promise<{ server: Server; close(): Promise<void> }> {
  const upstream = new HttpPool(upstreamOrigin, { connections: 128, pipelining: 1 });
  const db = new PgPool({ connectionString: databaseUrl, max: 10 });
  await db.query('create table if not exists bench_yardstick_charges (id bigserial primary key, request_id text not null, amount_micro bigint not null)');
  let calls = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const { statusCode, headers, body } = await upstream.request({
          method: 'POST',
          path: req.url ?? '/',
          headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
          body: Buffer.concat(chunks),
        });
        const answer = Buffer.from(await body.arrayBuffer());
        await db.query({
          name: 'charge',
          text: 'insert into bench_yardstick_charges (request_id, amount_micro) values ($1, $2)',
          values: [`call-${++calls}`, 17],
        });
        res.writeHead(statusCode, { 'content-type': String(headers['content-type'] ?? 'application/json') });
        res.end(answer);
      })().catch(() => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
    });
  });
  return { server, close: () => db.end() };
}
