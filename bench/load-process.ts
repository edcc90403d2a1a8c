/** Child-process entry of the outside phase (bench/outside.ts): one autocannon run (load.ts) in a process of its own; the job comes and the result goes over IPC. */
import { runLoad } from './load';
import type { LoadJob } from './phase';

process.once('message', (job: LoadJob) => {
  runLoad(job).then(
    (result) => process.send!({ result }, () => process.exit(0)),
    (err: unknown) => process.send!({ error: (err as Error).stack ?? String(err) }, () => process.exit(1)),
  );
});
