/**
 * BENCH_PROFILE=<dir>: a CPU profile of the gateway's thread during each gateway phase only
 * (node:inspector in-process; `--cpu-prof` would also record set-up and the idle direct phases).
 * Open the .cpuprofile files in Chrome DevTools or speedscope; with BENCH_PROFILE_HEAP=1, the
 * .heapprofile files (sampled allocations) too.
 */
import { Session } from 'node:inspector';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export async function profiled<T>(name: string, work: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_PROFILE;
  if (!dir) return work();
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<any>((resolve, reject) => session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
  await post('Profiler.start');
  // BENCH_PROFILE_HEAP=1: also where the phase allocates (sampled every 32 KiB), for the GC's share.
  const heap = process.env.BENCH_PROFILE_HEAP === '1';
  if (heap)
    await post('HeapProfiler.startSampling', { samplingInterval: 32768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  try {
    return await work();
  } finally {
    const { profile } = await post('Profiler.stop');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    if (heap) writeFileSync(join(dir, `${name}.heapprofile`), JSON.stringify((await post('HeapProfiler.stopSampling')).profile));
    session.disconnect();
  }
}
