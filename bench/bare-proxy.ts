/**
 * The bench's yardstick: a bare Node pass-through (node:http in, undici out) in front of the
 * instant upstream, doing what any proxy must (read the request, forward it, pipe the answer)
 * and nothing else: no auth, no limits, no billing. The gateway's rate is reported as a ratio
 * of this one's. Runs in its own worker thread (upstream-worker.ts), like the upstream.
 */
import { createServer, type Server } from 'node:http';
import { Pool } from 'undici';

export function createBareProxy(upstreamOrigin: string): Server {
  const pool = new Pool(upstreamOrigin, { connections: 128, pipelining: 1 });
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      pool
        .request({
          method: 'POST',
          path: req.url ?? '/',
          headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
          body: Buffer.concat(chunks),
        })
        .then(({ statusCode, headers, body }) => {
          res.writeHead(statusCode, { 'content-type': String(headers['content-type'] ?? 'application/json') });
          body.pipe(res);
        })
        .catch(() => {
          res.writeHead(502).end();
        });
    });
  });
}
