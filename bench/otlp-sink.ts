/**
 * A trace collector for the bench's traced runs (BENCH_TRACING=1): answers OTLP/HTTP exports at
 * `/v1/traces` with 200 at once and counts what came (exports and spans), so the run can say the
 * spans were sent without the sink costing the gateway more than a collector elsewhere would.
 * Spans are counted by their `spanId` keys (the exporter sends JSON), not parsed.
 */
import { createServer, type Server } from 'node:http';

export interface SinkCounts {
  exports: number;
  spans: number;
}

export function createOtlpSink(counts: SinkCounts): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const traces = req.url === '/v1/traces';
      if (traces) {
        counts.exports++;
        counts.spans += Buffer.concat(chunks).toString('utf8').split('"spanId"').length - 1;
      }
      res.writeHead(traces ? 200 : 404, { 'content-type': 'application/json' }).end('{}');
    });
  });
}
