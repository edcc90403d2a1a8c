/** Worker-thread entry: one autocannon run (load.ts), so the load generator never shares an event loop with the gateway (main thread) or the upstream (its own worker). */
import { parentPort, workerData } from 'node:worker_threads';
import { runLoad } from './load';
import type { LoadJob } from './phase';

runLoad(workerData as LoadJob).then(
  (result) => parentPort!.postMessage({ result }),
  (err: unknown) => parentPort!.postMessage({ error: (err as Error).stack ?? String(err) }),
);
