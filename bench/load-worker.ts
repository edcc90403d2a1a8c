/**
 * Worker-thread entry: one autocannon run, so the load generator never shares an event loop
 * with the gateway (main thread) or the upstream (its own worker). Rotates the Authorization
 * header over a pool of keys, checks every response body, keeps every 2xx latency (autocannon's
 * own histogram counts whole milliseconds, too coarse for a sub-millisecond upstream) and posts
 * back a PhaseResult.
 */
import { parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';
import { summarize, type LoadJob, type PhaseResult } from './phase';

/** The call id in a chat answer (the JSON body, or the first chunk of a stream). */
const CALL_ID = /"id":"(chatcmpl-[^"]+)"/;

async function main(job: LoadJob): Promise<PhaseResult> {
  let next = 0;
  let invalidBodies = 0;
  const latencies: number[] = [];
  const answered: [string, number | null][] = [];
  const options: autocannon.Options = {
    url: job.url,
    title: job.title,
    connections: job.connections,
    duration: job.durationSeconds,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: job.path,
        headers: { 'content-type': 'application/json' },
        body: job.body,
        setupRequest: (request) => {
          request.headers = { ...request.headers, authorization: `Bearer ${job.keys[next++ % job.keys.length]}` };
          return request;
        },
        onResponse: (status, body, _context, headers) => {
          if (status < 200 || status >= 300) return;
          if (!body.includes(job.expectInBody)) invalidBodies++;
          if (!job.collectCharges) return;
          const id = CALL_ID.exec(body)?.[1];
          const credits = headers['x-svc-credits'];
          if (id) answered.push([id, credits === undefined ? null : Number(credits)]);
        },
      },
    ],
  };
  const instance = autocannon(options);
  instance.on('response', (_client, status, _bytes, ms) => {
    if (status >= 200 && status < 300) latencies.push(ms);
  });
  // In a worker thread autocannon resolves to its raw per-worker result: aggregate it ourselves.
  const result = autocannon.aggregateResult([await instance], options);
  return { ...summarize(job, result, latencies, invalidBodies, job.collectCharges ? answered : undefined), rawLatencies: latencies };
}

main(workerData as LoadJob).then(
  (result) => parentPort!.postMessage({ result }),
  (err: unknown) => parentPort!.postMessage({ error: (err as Error).stack ?? String(err) }),
);
