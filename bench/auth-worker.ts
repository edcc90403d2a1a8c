/**
 * Worker-thread entry for the auth phase (auth.ts): one connection, one request at a time, the
 * two kinds of refused secrets taking turns so that a drift of the machine falls on both alike.
 * Posts back each kind's latencies (ms) and any status that was not 401.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

interface AuthJob {
  url: string;
  body: string;
  kinds: Record<string, string[]>;
  rounds: number;
}

async function main(job: AuthJob): Promise<{ latencies: Record<string, number[]>; unexpected: number }> {
  const pool = new Pool(job.url, { connections: 1, pipelining: 1 });
  const latencies: Record<string, number[]> = Object.fromEntries(Object.keys(job.kinds).map((k) => [k, []]));
  let unexpected = 0;
  try {
    for (let i = 0; i < job.rounds; i++) {
      for (const [kind, secrets] of Object.entries(job.kinds)) {
        const started = performance.now();
        const res = await pool.request({
          method: 'POST',
          path: '/v1/chat/completions',
          headers: { authorization: `Bearer ${secrets[i % secrets.length]}`, 'content-type': 'application/json' },
          body: job.body,
        });
        await res.body.text();
        latencies[kind].push(performance.now() - started);
        if (res.statusCode !== 401) unexpected++;
      }
    }
  } finally {
    await pool.close();
  }
  return { latencies, unexpected };
}

main(workerData as AuthJob).then(
  (result) => parentPort!.postMessage({ result }),
  (err: unknown) => parentPort!.postMessage({ error: (err as Error).stack ?? String(err) }),
);
