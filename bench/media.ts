/**
 * The heavy-media phase of `npm run bench` (skipped with BENCH_MEDIA=0): BENCH_MEDIA_CONCURRENCY
 * (default 10) clients sending image edits back to back for BENCH_MEDIA_SECONDS (default 10),
 * each a large valid input (a 2048x2048 PNG of noise, near the catalog's bound) edited at
 * 2048x2048, while another client polls /healthz; clients in a worker thread (media-clients.ts).
 * Live keys of the simulator-served edit model, so the test-key budget does not apply and
 * every edit is billed. Reported: /healthz p50/p99/max idle and under the edits, edits/s, and
 * the gateway thread's longest event-loop stall and longest GC pause in the phase (to tell a slow
 * probe caused by the gateway's loop from one the machine's cores caused).
 */
import { Worker } from 'node:worker_threads';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { join } from 'node:path';
import sharp from 'sharp';
import type { Gateway } from '../src/gateway';
import { creditsToMicro } from '../src/domain/shared/money';
import { percentile, stallMs } from './phase';
import type { MediaClientsJob, MediaClientsReport } from './media-clients';

export interface LatencyFigures {
  samples: number;
  p50: number;
  p99: number;
  max: number;
}

export interface MediaResult {
  settings: { concurrency: number; seconds: number; inputBytes: number; inputSize: string; outputSize: string };
  healthIdle: LatencyFigures;
  healthUnderEdits: LatencyFigures;
  healthErrors: number;
  /** The gateway thread's longest event-loop stall, and its longest GC pause, during the phase (ms). */
  loopStallMaxMs?: number;
  gcPauseMaxMs?: number;
  /** The clients' thread's longest event-loop stall (ms), the probe's included. */
  clientLoopStallMaxMs?: number;
  edits: { completed: number; perSecond: number; statusCodes: Record<string, number>; latencyMs: LatencyFigures };
  error?: string;
}

const SIDE = 2048;

function figures(values: number[]): LatencyFigures {
  const sorted = Float64Array.from(values).sort();
  const r = (n: number) => Math.round(n * 10) / 10;
  return { samples: sorted.length, p50: r(percentile(sorted, 50)), p99: r(percentile(sorted, 99)), max: r(sorted[sorted.length - 1] ?? 0) };
}

function positiveInt(name: string, fallback: number): number {
  const n = Number(process.env[name] || fallback);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`);
  return n;
}

export async function runMediaPhase(gateway: Gateway, gatewayUrl: string, opts: { log: (line: string) => void }): Promise<MediaResult> {
  const concurrency = positiveInt('BENCH_MEDIA_CONCURRENCY', 10);
  const seconds = positiveInt('BENCH_MEDIA_SECONDS', 10);
  // One key per client: 30 image requests a minute each is plenty for a few edits a second.
  const account = await gateway.accounts.findOrCreate({ issuer: 'urn:svc:bench', subject: 'bench-media' });
  await gateway.database.db.transaction((tx) =>
    gateway.services.ledger.grant(tx, { accountId: account.id, amountMicro: creditsToMicro(1_000_000), reason: 'bench media' }),
  );
  const keys: string[] = [];
  for (let i = 0; i < Math.min(concurrency, 10); i++) keys.push((await gateway.keys.create(account.id, { name: `media ${i}`, mode: 'live' })).secret);
  const image = await sharp({ create: { width: SIDE, height: SIDE, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 30 } } })
    .png({ compressionLevel: 6 })
    .toBuffer();
  const size = `${SIDE}x${SIDE}`;
  opts.log(`(media) ${concurrency} clients editing a ${(image.length / 1e6).toFixed(1)} MB ${size} PNG at ${size} for ${seconds} s while /healthz is polled…`);
  const job: MediaClientsJob = { url: gatewayUrl, keys, image, size, concurrency, seconds, idleSeconds: 2 };
  const settings = { concurrency, seconds, inputBytes: image.length, inputSize: size, outputSize: size };
  const loop = monitorEventLoopDelay({ resolution: 5 });
  let gcPauseMaxMs = 0;
  const gcs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcPauseMaxMs = Math.max(gcPauseMaxMs, e.duration);
  });
  try {
    loop.enable();
    gcs.observe({ entryTypes: ['gc'] });
    const report = await new Promise<MediaClientsReport>((ok, fail) => {
      const worker = new Worker(join(__dirname, 'media-clients.js'), { workerData: job });
      worker.once('message', (m: { report?: MediaClientsReport; error?: string }) => (m.report ? ok(m.report) : fail(new Error(m.error))));
      worker.once('error', fail);
      worker.once('exit', (code) => fail(new Error(`media clients exited with code ${code} before reporting`)));
    });
    const statusCodes: Record<string, number> = {};
    for (const e of report.edits) statusCodes[e.status] = (statusCodes[e.status] ?? 0) + 1;
    const completed = statusCodes['200'] ?? 0;
    const result: MediaResult = {
      settings,
      healthIdle: figures(report.idleHealthMs),
      healthUnderEdits: figures(report.loadedHealthMs),
      healthErrors: report.healthErrors,
      loopStallMaxMs: stallMs(loop),
      gcPauseMaxMs: Math.round(gcPauseMaxMs * 10) / 10,
      clientLoopStallMaxMs: report.clientLoopStallMaxMs,
      edits: { completed, perSecond: Math.round((completed / report.editSeconds) * 100) / 100, statusCodes, latencyMs: figures(report.edits.map((e) => e.ms)) },
    };
    if (completed === 0) result.error = `no edit succeeded: ${JSON.stringify(statusCodes)}`;
    const h = result.healthUnderEdits;
    opts.log(
      `(media) /healthz under edits p50 ${h.p50} ms, p99 ${h.p99} ms, max ${h.max} ms (${h.samples} polls); gateway loop stall max ${result.loopStallMaxMs} ms, GC pause max ${result.gcPauseMaxMs} ms; clients' loop stall max ${result.clientLoopStallMaxMs} ms; ${completed} edits, ${result.edits.perSecond}/s, status ${JSON.stringify(statusCodes)}`,
    );
    return result;
  } catch (err) {
    const empty = figures([]);
    return {
      settings,
      healthIdle: empty,
      healthUnderEdits: empty,
      healthErrors: 0,
      edits: { completed: 0, perSecond: 0, statusCodes: {}, latencyMs: empty },
      error: String(err),
    };
  } finally {
    loop.disable();
    gcs.disconnect();
  }
}

export function renderMediaMarkdown(m: MediaResult): string {
  const row = (label: string, f: LatencyFigures) => `| ${label} | ${f.samples} | ${f.p50} | ${f.p99} | ${f.max} |`;
  const lines = [
    '',
    '## Heavy media',
    '',
    `${m.settings.concurrency} clients send image edits back to back for ${m.settings.seconds} s (live keys, \`svc-image-edit-1\` on the simulator):`,
    `each uploads a ${(m.settings.inputBytes / 1e6).toFixed(1)} MB ${m.settings.inputSize} PNG of noise and asks for ${m.settings.outputSize}. Meanwhile another client`,
    `polls \`/healthz\` one request at a time (clients in a worker thread, not on the gateway's event loop).`,
    '',
  ];
  if (m.error) lines.push(`**The phase failed:** ${m.error}`, '');
  lines.push(
    '| /healthz | polls | p50 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|---:|',
    row('idle, before the edits', m.healthIdle),
    row(`during ${m.settings.concurrency} concurrent heavy edits`, m.healthUnderEdits),
    '',
    `Edits: **${m.edits.completed} completed, ${m.edits.perSecond}/s**, status codes ${JSON.stringify(m.edits.statusCodes)}, latency p50 ${m.edits.latencyMs.p50} ms, p99 ${m.edits.latencyMs.p99} ms. /healthz errors: ${m.healthErrors}. The gateway thread's longest event-loop stall in the phase: ${m.loopStallMaxMs ?? '–'} ms; its longest GC pause: ${m.gcPauseMaxMs ?? '–'} ms. The clients' thread (the probe's too) stalled at most ${m.clientLoopStallMaxMs ?? '–'} ms.`,
    '',
  );
  return lines.join('\n');
}
