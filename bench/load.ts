/**
 * One autocannon run, for the load worker thread (load-worker.ts) and the load process of the
 * outside phase (load-process.ts) alike. Rotates the Authorization header over a pool of keys,
 * checks every response body, keeps every 2xx latency (autocannon's own histogram counts whole
 * milliseconds, too coarse for a sub-millisecond upstream) and answers a PhaseResult.
 */
import autocannon from 'autocannon';
import { summarize, type LoadJob, type PhaseResult } from './phase';

/** The call id in a chat answer (the JSON body, or the first chunk of a stream). */
const CALL_ID = /"id":"(chatcmpl-[^"]+)"/;

export async function runLoad(job: LoadJob): Promise<PhaseResult> {
  let next = 0;
  let invalidBodies = 0;
  const latencies: number[] = [];
  const answered: [string, number | null][] = [];
  const options: autocannon.Options = {
    url: job.url,
    title: job.title,
    connections: job.connections,
    ...(job.amount
      ? // A pass of `amount` calls ends at the first sample after its last answer: sampled often, so its duration is close to true.
        { amount: job.amount, sampleInt: 50 }
      : { duration: job.durationSeconds }),
    timeout: 30,
    // The raw result on a main thread too, as in a worker: aggregated below either way.
    skipAggregateResult: true,
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
  const result = autocannon.aggregateResult([await instance], options);
  return { ...summarize(job, result, latencies, invalidBodies, job.collectCharges ? answered : undefined), rawLatencies: latencies };
}
