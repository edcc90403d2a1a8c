/**
 * Worker-thread entry for the heavy-media phase (bench/media.ts): `concurrency` clients each
 * sending image edits back to back, and one client polling /healthz one request at a time,
 * so neither shares the gateway's event loop. Reports every /healthz latency and every edit.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Agent, FormData, request } from 'undici';
import { stallMs } from './phase';

export interface MediaClientsJob {
  url: string;
  keys: string[];
  image: Uint8Array;
  size: string;
  concurrency: number;
  seconds: number;
  /** Polls of /healthz before the edits start: the idle reference. */
  idleSeconds: number;
}

export interface MediaClientsReport {
  idleHealthMs: number[];
  loadedHealthMs: number[];
  healthErrors: number;
  edits: { ms: number; status: number }[];
  editSeconds: number;
  /** This thread's own longest event-loop stall while the edits ran (ms): a probe it held up is the client's delay, not the gateway's. */
  clientLoopStallMaxMs: number;
}

async function run(job: MediaClientsJob): Promise<MediaClientsReport> {
  const agent = new Agent({ connections: job.concurrency });
  // The probe's own connection, as a load balancer's health check has: never queued behind an edit.
  const probeAgent = new Agent({ connections: 1 });
  const edit = async (key: string, i: number): Promise<{ ms: number; status: number }> => {
    const form = new FormData();
    form.set('model', 'svc-image-edit-1');
    form.set('prompt', `heavy edit ${i}`);
    form.set('size', job.size);
    form.set('image', new Blob([job.image], { type: 'image/png' }), 'input.png');
    const t = performance.now();
    const res = await request(`${job.url}/v1/images/edits`, { method: 'POST', dispatcher: agent, headers: { authorization: `Bearer ${key}` }, body: form });
    await res.body.text();
    return { ms: performance.now() - t, status: res.statusCode };
  };
  const poll = async (until: () => boolean, into: number[]): Promise<number> => {
    let errors = 0;
    while (!until()) {
      const t = performance.now();
      try {
        const res = await request(`${job.url}/healthz`, { dispatcher: probeAgent });
        await res.body.text();
        if (res.statusCode !== 200) errors++;
        into.push(performance.now() - t);
      } catch {
        errors++;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    return errors;
  };
  // One edit first, unmeasured: the first one loads what the edit path loads lazily.
  const warm = await edit(job.keys[0], 0);
  if (warm.status !== 200) throw new Error(`the warm-up edit answered ${warm.status}`);
  const idleHealthMs: number[] = [];
  const idleEnd = performance.now() + job.idleSeconds * 1000;
  let healthErrors = await poll(() => performance.now() >= idleEnd, idleHealthMs);

  const loadedHealthMs: number[] = [];
  const edits: { ms: number; status: number }[] = [];
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const started = performance.now();
  const end = started + job.seconds * 1000;
  let editing = true;
  const poller = poll(() => !editing, loadedHealthMs);
  const client = async (i: number) => {
    const key = job.keys[i % job.keys.length];
    while (performance.now() < end) edits.push(await edit(key, i));
  };
  await Promise.all(Array.from({ length: job.concurrency }, (_, i) => client(i)));
  const editSeconds = (performance.now() - started) / 1000;
  editing = false;
  healthErrors += await poller;
  loop.disable();
  await Promise.all([agent.close(), probeAgent.close()]);
  return { idleHealthMs, loadedHealthMs, healthErrors, edits, editSeconds, clientLoopStallMaxMs: stallMs(loop) };
}

run(workerData as MediaClientsJob).then(
  (report) => parentPort!.postMessage({ report }),
  (err: unknown) => parentPort!.postMessage({ error: String((err as Error).stack ?? err) }),
);
