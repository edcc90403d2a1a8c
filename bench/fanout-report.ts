/**
 * The fan-out phase's section of the bench results: its Markdown (appended to latest.md), and
 * under BENCH_ONLY=fanout that section and the JSON's `fanout` replaced in an existing results file.
 */
import { replaceSection } from './results-section';
import { OPEN_CONCURRENCY, type FanoutJob, type FanoutResult, type FanoutRound, type MemorySnapshot, type Probes } from './fanout-types';

const ms = (n: number) => n.toFixed(1);
const TARGET_P99_MS: Record<number, number> = { 1000: 50, 10_000: 500 };
const HEALTHZ_TARGET_MS = 100;

export function renderFanoutMarkdown(f: FanoutResult, runNote?: string): string {
  const s = f.settings;
  const kib = (r: FanoutRound) => `${r.memory.perIdleConnectionKB.heapUsed} + ${r.memory.perSubscriptionKB.heapUsed}`;
  const met = (ok: boolean) => (ok ? 'met' : '**not met**');
  const healthCell = (p: Probes) => (p.p99 < HEALTHZ_TARGET_MS ? ms(p.p99) : `**${ms(p.p99)}**`);
  const lines = [
    '',
    '## Subscription fan-out',
    '',
    ...(runNote ? [runNote, ''] : []),
    `Subscribers speak graphql-ws (graphql-transport-ws) from child processes (at most ${s.perProcess} sockets each; clients: ${s.clients}),`,
    `so their sockets share neither the gateway's event loop nor its memory figures. The default client (bench/graphql-ws-wire.ts) reads frames`,
    `itself: graphql-ws's createClient over ws costs about 40 µs of CPU per message, taken on this 2-core machine from the gateway under`,
    `test (BENCH_FANOUT_CLIENT=graphql-ws runs it). All authenticate with one live API key of one account (connection_init's`,
    `\`authorization\`) and each holds one \`${s.subscription}\` subscription. Per round, ${s.jobs} video jobs (after one`,
    `warm-up job) are queued one at a time with test keys of that account and finished by the simulator`,
    `(SIMULATOR_VIDEO_SECONDS=${s.simulatorVideoSeconds}). Event path: ${f.eventBus === 'redis' ? 'Redis pub/sub' : 'the in-process event bus'}, delivered in batches of ${s.batch}`,
    `listener calls per event-loop turn. A separate process sends GET /healthz every ${s.probeEveryMs} ms (open loop) throughout; a probe`,
    `counts for a window when its time in flight overlaps it. Fan-out latency: from JobFinisher's publish (right after the`,
    `COMPLETED commit) to each client's reading of its \`next\` message, all subscribers of all measured jobs pooled.`,
    '',
  ];
  if (f.error) lines.push(`**The phase failed:** ${f.error}`, '');
  lines.push(
    `Targets: fan-out p99 ≤ 50 ms at 1,000 and ≤ 500 ms at 10,000; /healthz p99 < ${HEALTHZ_TARGET_MS} ms while the sockets connect and while`,
    `events fan out (a figure in bold is past it). The subscribe column is every socket subscribing within the same moment,`,
    `a harder case than the targets' windows.`,
    '',
    '| subscribers | connect rate | heap per socket, KiB (connection + subscription) | fan-out p50 ms | **p99 ms** | **last ms (max)** | target p99 | /healthz p99 ms: connect / subscribe / fan-out | loop stall max ms: connect / fan-out |',
    '|---:|---:|---|---:|---:|---:|---|---|---|',
    ...f.rounds.map((r) => {
      const target = TARGET_P99_MS[r.connections];
      const h = r.healthz;
      return (
        `| ${r.open.ok.toLocaleString('en-US')}${r.open.failed ? ` (${r.open.failed} failed)` : ''} | ${r.open.perSecond}/s | ${kib(r)} | ${ms(r.overallMs.p50)} | **${ms(r.overallMs.p99)}** | **${ms(r.overallMs.max)}** | ` +
        `${target ? `≤ ${target}: ${met(r.overallMs.p99 <= target)}` : ''} | ${healthCell(h.connect)} / ${healthCell(h.subscribe)} / ${healthCell(h.fanout)} | ` +
        `${ms(r.loopStallMs.connect)} / ${ms(r.loopStallMs.fanout)} |`
      );
    }),
    '',
  );
  for (const r of f.rounds) {
    const m = r.memory;
    const memRow = (label: string, x: MemorySnapshot) => `| ${label} | ${x.rssMB.toFixed(1)} | ${x.heapUsedMB.toFixed(1)} | ${x.externalMB.toFixed(1)} |`;
    const jobRow = (label: string, j: FanoutJob) =>
      `| ${label} | ${j.status} | ${j.received}/${j.expected} | ${ms(j.publishToBusMs)} | ${ms(j.latencyMs.first)} | ${ms(j.latencyMs.p50)} | ${ms(j.latencyMs.p99)} | ${ms(j.latencyMs.max)} | ${ms(j.loopStallMs)} | ${ms(j.clientCpuMs)} |`;
    const probeRow = (label: string, p: Probes) => `| ${label} | ${p.count} | ${ms(p.p50)} | ${ms(p.p99)} | ${ms(p.max)} | ${p.failed} |`;
    lines.push(
      `### ${r.connections.toLocaleString('en-US')} subscribers (${r.clientProcesses} client process${r.clientProcesses > 1 ? 'es' : ''})`,
      '',
      ...(r.error ? [`**This round failed:** ${r.error}`, ''] : []),
      `Opening took ${r.open.seconds} s (${r.open.perSecond} connections/s, ${OPEN_CONCURRENCY} in flight per process, each checked by connection_init)` +
        `${r.open.failed ? `; **${r.open.failed} failed**: ${r.open.failures.join('; ')}` : ''}, from ${r.sourceAddresses} loopback address${r.sourceAddresses > 1 ? 'es' : ''} ` +
        `(the gateway keeps its default cap of ${f.settings.capPerAddress || 'no'} connections per address); the subscriptions were all active on the bus ${r.subscribeSeconds} s ` +
        `after they were sent. Client processes: ${m.clientProcessRssMB} MB RSS together. Clock offsets ${r.clocks.map((c) => `${c.offsetMs} ms (rtt ${c.rttMs}${c.corrected ? ', corrected' : ''})`).join(', ')}.`,
      '',
      `| gateway memory after forced GC (${f.gc}) | RSS MB | heap used MB | external MB |`,
      '|---|---:|---:|---:|',
      memRow('baseline', m.baseline),
      memRow(`${r.open.ok} idle authenticated connections`, m.idle),
      memRow('+ one subscription on each', m.subscribed),
      '',
      `Per idle connection: **${m.perIdleConnectionKB.heapUsed} KiB heap**, ${m.perIdleConnectionKB.external} KiB external, ${m.perIdleConnectionKB.rss} KiB RSS; ` +
        `per subscription on top: ${m.perSubscriptionKB.heapUsed} KiB heap, ${m.perSubscriptionKB.external} KiB external, ${m.perSubscriptionKB.rss} KiB RSS.`,
      '',
      '| /healthz while … | probes | p50 ms | p99 ms | max ms | not 200 |',
      '|---|---:|---:|---:|---:|---:|',
      probeRow('the sockets connect', r.healthz.connect),
      probeRow('they subscribe', r.healthz.subscribe),
      probeRow(`the ${r.jobs.length} jobs fan out`, r.healthz.fanout),
      '',
      '| job | status | subscribers | bus ms | first ms | p50 ms | p99 ms | last ms | loop stall ms | client CPU ms |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...(r.warmup ? [jobRow('warm-up (not pooled)', r.warmup)] : []),
      ...r.jobs.map((j, i) => jobRow(String(i + 1), j)),
      `| **all ${r.jobs.length} jobs** | | ${r.overallMs.samples} deliveries | | ${ms(r.overallMs.first)} | **${ms(r.overallMs.p50)}** | **${ms(r.overallMs.p99)}** | **${ms(r.overallMs.max)}** | | |`,
      '',
    );
  }
  lines.push(
    `"bus" is publish → the bench's own listener on the bus (${f.eventBus === 'redis' ? 'the Redis round trip' : 'in-process: immediate'}); "loop stall" is the gateway's`,
    `longest event-loop delay from publish until every client reported (monitorEventLoopDelay, 1 ms resolution); "client CPU"`,
    `is what the client processes spent from their first receipt to their last. Phase time ${f.seconds} s (BENCH_FANOUT_CONNECTIONS,`,
    `BENCH_FANOUT_PER_PROCESS, BENCH_FANOUT_JOBS; SIMULATOR_VIDEO_SECONDS is passed through, default 0.5 here).`,
    '',
  );
  return lines.join('\n');
}

/**
 * BENCH_ONLY=fanout: the fan-out section of an existing results file (`<name>.md`, `<name>.json`)
 * is replaced and the other phases' figures beside it are kept (the phase ran without them).
 */
export function writeFanoutOnly(resultsDir: string, fanout: FanoutResult, environment: unknown, name = 'latest', at = new Date()): void {
  const env = environment as { node?: string; cpu?: string; database?: string; redis?: boolean };
  const note =
    `Run on its own (\`BENCH_ONLY=fanout\`), ${at.toISOString().slice(0, 16).replace('T', ' ')} UTC: Node ${env.node}, ${env.cpu}, ` +
    `${env.database === 'postgresql' ? 'PostgreSQL' : 'embedded PGlite'}${env.redis ? ' + Redis' : ''}.`;
  replaceSection(resultsDir, '## Subscription fan-out', renderFanoutMarkdown(fanout, note), 'fanout', { date: at.toISOString(), environment, ...fanout }, name);
}
