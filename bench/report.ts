/** The bench's result file, and its Markdown rendering. */
import type { PhaseResult } from './phase';

export interface BenchReport {
  date: string;
  environment: { node: string; platform: string; cpu: string; database: 'pglite' | 'postgresql'; redis: boolean };
  settings: { secondsPerPhase: number; unloadedSecondsPerPhase: number; connections: number; keyPool: number; maxTokens: number };
  phases: PhaseResult[];
  /** Gateway minus direct, per percentile, in milliseconds: under load, then on one connection. */
  addedLatencyMs: { connections: number; nonStreamed: { p50: number; p99: number }; streamed: { p50: number; p99: number } }[];
  ledger: { consistent: boolean; charges: number; openHolds: number; gatewayCalls2xx: number };
  totalSeconds: number;
}

const ms = (n: number) => n.toFixed(2);

function statusCell(r: PhaseResult): string {
  const codes = Object.entries(r.statusCodes).map(([code, n]) => `${code}×${n}`).join(' ');
  const extra = [r.errors ? `errors ${r.errors}` : '', r.timeouts ? `timeouts ${r.timeouts}` : '', r.invalidBodies ? `invalid bodies ${r.invalidBodies}` : '']
    .filter(Boolean)
    .join(', ');
  return [codes, extra].filter(Boolean).join('; ');
}

export function renderMarkdown(r: BenchReport): string {
  const e = r.environment;
  const lines = [
    '# Gateway benchmark: chat through an OpenAI-compatible upstream',
    '',
    `Run ${r.date} · Node ${e.node} · ${e.platform} · ${e.cpu} · ${e.database === 'pglite' ? 'embedded PGlite' : 'PostgreSQL'} · ` +
      `${e.redis ? 'Redis' : 'in-process'} rate limits · ${r.settings.keyPool} live keys rotated · max_tokens ${r.settings.maxTokens}`,
    '',
    'The upstream is an instant local OpenAI-compatible server (bench/instant-upstream.ts) in its own worker thread; the',
    'gateway runs in the main thread (createGateway, as `npm start` builds it); autocannon runs in a worker thread per phase.',
    'Latencies are from every 2xx response, in milliseconds, to the last byte of the body (for streams: to `data: [DONE]`).',
    `Phases (a)–(d) run ${r.settings.secondsPerPhase} s each at ${r.settings.connections} concurrent connections; (a1)–(d1) run ` +
      `${r.settings.unloadedSecondsPerPhase} s each on one connection, where nothing queues.`,
    '',
    '| phase | target | mode | conns | req/s | mean ms | p50 ms | p90 ms | p99 ms | max ms | responses |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|',
    ...r.phases.map(
      (p) =>
        `| (${p.id}) | ${p.target} | ${p.streamed ? 'streamed' : 'non-streamed'} | ${p.connections} | ${p.requestsPerSecond.toFixed(0)} | ${ms(p.latencyMs.mean)} | ` +
        `${ms(p.latencyMs.p50)} | ${ms(p.latencyMs.p90)} | ${ms(p.latencyMs.p99)} | ${ms(p.latencyMs.max)} | ${statusCell(p)} |`,
    ),
    '',
    '## Added latency (gateway minus direct)',
    '',
    '| connections | mode | p50 ms | p99 ms |',
    '|---:|---|---:|---:|',
    ...r.addedLatencyMs.flatMap((a) => [
      `| ${a.connections} | non-streamed | +${ms(a.nonStreamed.p50)} | +${ms(a.nonStreamed.p99)} |`,
      `| ${a.connections} | streamed | +${ms(a.streamed.p50)} | +${ms(a.streamed.p99)} |`,
    ]),
    '',
    `Every gateway call authenticates its key, counts against its rate limit, places a hold and settles it in two database`,
    `transactions. After the run the ledger was ${r.ledger.consistent ? 'consistent (every balance equals the sum of its entries)' : '**inconsistent**'}: ` +
      `${r.ledger.charges} charges for ${r.ledger.gatewayCalls2xx} answered calls (calls cut off when a phase ends are charged too), ${r.ledger.openHolds} holds open.`,
    '',
    `Total run time ${r.totalSeconds} s. Reproduce with \`npm run bench\` (BENCH_SECONDS, BENCH_UNLOADED_SECONDS, BENCH_CONNECTIONS, BENCH_KEYS; DATABASE_URL / REDIS_URL are passed through).`,
    '',
  ];
  return lines.join('\n');
}
