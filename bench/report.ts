/** The bench's result file, and its Markdown rendering: side by side, as ratios to the bare pass-through. */
import type { MoneyCheck } from './money-check';
import type { PhaseResult } from './phase';
import { probeText, type MachineProbe } from './machine-probe';

export interface BenchReport {
  date: string;
  environment: {
    node: string;
    platform: string;
    cpu: string;
    database: 'pglite' | 'postgresql';
    redis: boolean;
    /** The machine's speed as the run began and as it ended (machine-probe.ts). */
    probe?: { start: MachineProbe; end: MachineProbe };
    /** BENCH_TRACING=1: what the bench's trace collector had received when the report was written. */
    tracing?: { exports: number; spans: number };
  };
  settings: {
    secondsPerPhase: number;
    unloadedSecondsPerPhase: number;
    rounds?: number;
    connections: number;
    keyPool: number;
    accounts: number;
    maxTokens: number;
  };
  phases: PhaseResult[];
  money: MoneyCheck[];
  /** Calls per group commit over the run. */
  chargesPerCommit: number;
  totalSeconds: number;
}

const ms = (n: number) => n.toFixed(2);
const pct = (n: number) => `${(n * 100).toFixed(0)}%`;

function statusCell(r: PhaseResult): string {
  const codes = Object.entries(r.statusCodes)
    .map(([code, n]) => `${code}×${n}`)
    .join(' ');
  const extra = [r.errors ? `errors ${r.errors}` : '', r.timeouts ? `timeouts ${r.timeouts}` : '', r.invalidBodies ? `invalid bodies ${r.invalidBodies}` : '']
    .filter(Boolean)
    .join(', ');
  return [codes, extra].filter(Boolean).join('; ');
}

export interface SideBySide {
  connections: number;
  streamed: boolean;
  direct: PhaseResult;
  bare: PhaseResult;
  gateway: PhaseResult;
  /** The committing pass-through (PostgreSQL runs only): bare plus one committed charge per call. */
  committing?: PhaseResult;
  /** Gateway req/s as a share of the bare pass-through's. */
  ratio: number;
  addedMeanMs: number;
  addedP50Ms: number;
  /** What the committing pass-through adds to the direct call's mean: the floor of any proxy that commits before it answers. */
  committingAddedMeanMs?: number;
}

const added = (target: PhaseResult, direct: PhaseResult) => Math.round((target.latencyMs.mean - direct.latencyMs.mean) * 1000) / 1000;

export function sideBySide(r: BenchReport): SideBySide[] {
  const find = (target: string, streamed: boolean, connections: number) =>
    r.phases.find((p) => p.target === target && p.streamed === streamed && p.connections === connections)!;
  const rows: SideBySide[] = [];
  for (const connections of [...new Set(r.phases.map((p) => p.connections))]) {
    for (const streamed of [false, true]) {
      const direct = find('direct', streamed, connections);
      const bare = find('bare', streamed, connections);
      const gateway = find('gateway', streamed, connections);
      const committing = find('committing', streamed, connections);
      if (!direct || !bare || !gateway) continue;
      rows.push({
        connections,
        streamed,
        direct,
        bare,
        gateway,
        ...(committing ? { committing, committingAddedMeanMs: added(committing, direct) } : {}),
        ratio: bare.requestsPerSecond > 0 ? gateway.requestsPerSecond / bare.requestsPerSecond : 0,
        addedMeanMs: added(gateway, direct),
        addedP50Ms: Math.round((gateway.latencyMs.p50 - direct.latencyMs.p50) * 1000) / 1000,
      });
    }
  }
  return rows;
}

const msOrDash = (value: number | undefined) => (value !== undefined ? value.toFixed(3) : '—');

/** The whole machine's busy time per call in each target's segments, as `direct / bare / committing / gateway`. */
function machineCpu(s: SideBySide): string {
  return [s.direct, s.bare, ...(s.committing ? [s.committing] : []), s.gateway].map((r) => msOrDash(r.machineCpuMsPerCall)).join(' / ');
}

/** The bare and committing pass-throughs' CPU per call (their worker threads'), as `bare / committing`. */
function passCpu(s: SideBySide): string {
  return [s.bare, ...(s.committing ? [s.committing] : [])].map((r) => msOrDash(r.threadCpuMsPerCall)).join(' / ');
}

export function summaryLines(r: BenchReport): string[] {
  return [
    ...sideBySide(r).map(
      (s) =>
        `c=${s.connections} ${s.streamed ? 'streamed' : 'non-streamed'}: direct ${s.direct.requestsPerSecond.toFixed(0)}, bare ${s.bare.requestsPerSecond.toFixed(0)}, ` +
        `gateway ${s.gateway.requestsPerSecond.toFixed(0)} req/s = ${pct(s.ratio)} of bare (rounds ${(s.gateway.roundRatios ?? []).map(pct).join(' ')}); added mean ${ms(s.addedMeanMs)} ms; ` +
        `gateway busy ${(s.gateway.gatewayBusyMsPerCall ?? 0).toFixed(3)} ms/call (loop ${pct(s.gateway.gatewayUtilization ?? 0)}), CPU ${(s.gateway.gatewayCpuMsPerCall ?? 0).toFixed(3)} ms/call` +
        (s.committing
          ? `; committing pass-through ${s.committing.requestsPerSecond.toFixed(0)} req/s, added mean ${ms(s.committingAddedMeanMs ?? 0)} ms`
          : '') +
        `; pass-through CPU ${passCpu(s)} ms/call; machine CPU ${machineCpu(s)} ms/call`,
    ),
    `money: ${r.money.every((m) => m.ok) ? 'exact after every gateway phase' : 'WRONG'}; ${r.chargesPerCommit} charges per commit`,
  ];
}

/** The money checks as a Markdown table, a row per check. */
export function moneyTable(money: MoneyCheck[]): string[] {
  return [
    '| phase | answered | charges | cut off | missing | x-svc-credits ≠ charge | drift | open leases | lease ≠ return | open holds | past cap | uncollected | |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...money.map(
      (m) =>
        `| ${m.phase} | ${m.answered} | ${m.charges} | ${m.cutOff} | ${m.missing} | ${m.mismatched} | ${m.drift} | ${m.openLeases} | ${m.leaseDrift} | ${m.openHolds} | ${m.pastCap} | ${m.uncollected ?? '–'} | ${m.ok ? 'exact' : '**WRONG**'} |`,
    ),
  ];
}

export function renderMarkdown(r: BenchReport): string {
  const e = r.environment;
  const rows = sideBySide(r);
  const lines = [
    '# Gateway benchmark: chat through an OpenAI-compatible upstream, side by side',
    '',
    `Run ${r.date} · Node ${e.node} · ${e.platform} · ${e.cpu} · ${e.database === 'pglite' ? 'embedded PGlite' : 'PostgreSQL'} · ` +
      `${e.redis ? 'Redis' : 'in-process'} rate limits · ${r.settings.keyPool} live keys over ${r.settings.accounts} accounts · max_tokens ${r.settings.maxTokens}`,
    '',
    ...(e.probe
      ? [`Machine probe (bench/machine-probe.ts, lower is faster): at the start ${probeText(e.probe.start)}; at the end ${probeText(e.probe.end)}.`, '']
      : []),
    ...(e.tracing
      ? [
          `Traced (BENCH_TRACING=1): every request sampled and exported over OTLP/HTTP to the bench's collector, which had received ${e.tracing.spans} spans in ${e.tracing.exports} exports when this was written.`,
          '',
        ]
      : []),
    'Three targets, each its own event loop: the instant upstream (bench/instant-upstream.ts, a worker thread) called directly;',
    'a bare Node pass-through in front of it (bench/bare-proxy.ts: node:http + undici, nothing else, a worker thread); and the',
    'gateway (this thread, as `npm start` builds it, with authentication, rate limits and exact billing on). On PostgreSQL a fourth,',
    'the committing pass-through (bench/committing-proxy.ts): the bare one plus one charge row committed per call before it answers,',
    'the one rule of the gateway that needs the database on the way, so its added latency is the floor of any design that keeps it.',
    'autocannon runs in a worker thread per phase. Latencies are from every 2xx response, to the last byte (for streams: to',
    '`data: [DONE]`).',
    `Loaded phases run ${r.settings.secondsPerPhase} s at ${r.settings.connections} connections; unloaded ones ${r.settings.unloadedSecondsPerPhase} s on one. ` +
      `Each load's targets take turns in ${r.settings.rounds ?? 1} round(s) (direct, bare, committing, gateway, again), so a drift of the`,
    "machine's speed during the run falls on every target alike; req/s are over every round, latencies over every response, and",
    '"per round" lists the gateway / bare ratio of each round.',
    '',
    '| conns | mode | direct req/s | bare req/s | committing req/s (added mean ms) | gateway req/s | gateway / bare | per round | added mean ms | added p50 ms | gateway busy ms/call | gateway loop busy | gateway CPU ms/call | bare / committing CPU ms/call | machine CPU ms/call: direct / bare / (committing /) gateway |',
    '|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (s) =>
        `| ${s.connections} | ${s.streamed ? 'streamed' : 'non-streamed'} | ${s.direct.requestsPerSecond.toFixed(0)} | ${s.bare.requestsPerSecond.toFixed(0)} | ` +
        `${s.committing ? `${s.committing.requestsPerSecond.toFixed(0)} (+${ms(s.committingAddedMeanMs ?? 0)})` : '—'} | ` +
        `${s.gateway.requestsPerSecond.toFixed(0)} | **${pct(s.ratio)}** | ${(s.gateway.roundRatios ?? []).map(pct).join(' ')} | +${ms(s.addedMeanMs)} | +${ms(s.addedP50Ms)} | ` +
        `${(s.gateway.gatewayBusyMsPerCall ?? 0).toFixed(3)} | ${pct(s.gateway.gatewayUtilization ?? 0)} | ${(s.gateway.gatewayCpuMsPerCall ?? 0).toFixed(3)} | ${passCpu(s)} | ${machineCpu(s)} |`,
    ),
    '',
    '## Every phase',
    '',
    '| phase | req/s | mean ms | p50 ms | p90 ms | p99 ms | max ms | responses |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
    ...r.phases.map(
      (p) =>
        `| ${p.title} | ${p.requestsPerSecond.toFixed(0)} | ${ms(p.latencyMs.mean)} | ${ms(p.latencyMs.p50)} | ${ms(p.latencyMs.p90)} | ${ms(p.latencyMs.p99)} | ` +
        `${ms(p.latencyMs.max)} | ${statusCell(p)} |`,
    ),
    '',
    '## Money, checked after every gateway phase',
    '',
    'Calls in flight settle, idle credit leases go back, then: every balance equals the sum of its ledger entries and is not',
    'negative; every answered call has exactly one charge, and a non-streamed one carries that charge in `x-svc-credits`; the only',
    'other charges are calls cut off by the phase end (at most one per connection); no hold or lease is left open; every closed',
    'lease gave back its amount less its charges (lease ≠ return); no key passed its daily cap, whichever instance charged it;',
    `nothing was recorded as uncollected. Charges were group-committed ${r.chargesPerCommit} to a transaction on average.`,
    '',
    ...moneyTable(r.money),
    '',
    `Total run time ${r.totalSeconds} s. Reproduce with \`npm run bench\` (BENCH_SECONDS, BENCH_UNLOADED_SECONDS, BENCH_CONNECTIONS, BENCH_KEYS; DATABASE_URL / REDIS_URL are passed through).`,
    '',
  ];
  return lines.join('\n');
}
