/**
 * The outside phase's results (bench/outside.ts): each load's targets side by side, the figures
 * issue 46 sets targets for, each marked met or not met, and the money after every gateway load.
 */
import { moneyTable } from './report';
import type { MoneyCheck } from './money-check';
import type { PhaseResult } from './phase';
import { probeText, type MachineProbe } from './machine-probe';

/** One load (a mode at a connection count): its targets' merged segments. */
export interface OutsideLoad {
  id: string;
  connections: number;
  streamed: boolean;
  bare: PhaseResult;
  /** PostgreSQL only: the bare pass-through plus one committed charge row per call (committing-proxy.ts). */
  committing?: PhaseResult;
  /** Warm keys: each called just before the segment, its lease held. */
  gateway: PhaseResult;
  /** At one connection: each key's first call after its lease went back (one pass over the keys a round). */
  cold?: PhaseResult;
  /** Gateway / bare req/s of each round. */
  roundRatios: number[];
}

export interface OutsideTarget {
  load: string;
  target: string;
  measured: string;
  limit: string;
  /** null: not measurable in this run (no committing pass-through on the embedded database). */
  met: boolean | null;
}

export interface OutsideResult {
  date: string;
  environment: {
    node: string;
    cpu: string;
    database: 'postgresql' | 'pglite';
    redis: boolean;
    /** The machine's speed as the phase began and as it ended (machine-probe.ts). */
    probe?: { start: MachineProbe; end: MachineProbe };
  };
  settings: {
    keys: number;
    accounts: number;
    secondsPerLoad: number;
    warmUpSeconds: number;
    rounds: number;
    connections: number;
    /** LEASE_IDLE_SECONDS of the phase's gateway. */
    leaseIdleSeconds: number;
  };
  loads: OutsideLoad[];
  targets: OutsideTarget[];
  money: MoneyCheck[];
  totalSeconds: number;
}

export const HEADING = '## Outside: every party its own process';

/** Issue 46's targets. */
const MIN_SHARE_OF_BARE = 0.4;
const MAX_P99_OVER_BARE = 3;
const MAX_WARM_ADDED_MS = 0.5;

const r3 = (n: number) => Math.round(n * 1000) / 1000;
/** A target's mean over the bare pass-through's, ms. */
export const overBare = (p: PhaseResult, bare: PhaseResult) => r3(p.latencyMs.mean - bare.latencyMs.mean);
const share = (p: PhaseResult, bare: PhaseResult) => (bare.requestsPerSecond > 0 ? p.requestsPerSecond / bare.requestsPerSecond : 0);
const p99Over = (p: PhaseResult, bare: PhaseResult) => (bare.latencyMs.p99 > 0 ? p.latencyMs.p99 / bare.latencyMs.p99 : 0);
const pct = (n: number) => `${(n * 100).toFixed(0)}%`;
const ms = (n: number) => n.toFixed(2);
const signed = (n: number) => `${n >= 0 ? '+' : ''}${n.toFixed(2)}`;

export function outsideTargets(loads: OutsideLoad[]): OutsideTarget[] {
  const targets: OutsideTarget[] = [];
  for (const l of loads) {
    if (l.connections > 1) {
      const ratio = share(l.gateway, l.bare);
      const tail = p99Over(l.gateway, l.bare);
      targets.push(
        { load: l.id, target: 'gateway req/s / bare', measured: pct(ratio), limit: `≥ ${pct(MIN_SHARE_OF_BARE)}`, met: ratio >= MIN_SHARE_OF_BARE },
        { load: l.id, target: "gateway p99 / bare's", measured: `${tail.toFixed(2)}×`, limit: `≤ ${MAX_P99_OVER_BARE}×`, met: tail <= MAX_P99_OVER_BARE },
      );
      continue;
    }
    const warm = overBare(l.gateway, l.bare);
    targets.push({
      load: l.id,
      target: 'warm keys: mean over bare',
      measured: `${signed(warm)} ms`,
      limit: `≤ ${ms(MAX_WARM_ADDED_MS)} ms`,
      met: warm <= MAX_WARM_ADDED_MS,
    });
    if (!l.cold) continue;
    const cold = overBare(l.cold, l.bare);
    const commit = l.committing ? overBare(l.committing, l.bare) : undefined;
    targets.push({
      load: l.id,
      target: 'cold keys: mean over bare',
      measured: `${signed(cold)} ms`,
      limit:
        commit === undefined
          ? `≤ ${ms(MAX_WARM_ADDED_MS)} ms + one commit (no committing pass-through here)`
          : `≤ ${ms(MAX_WARM_ADDED_MS + commit)} ms (0.50 + committing's ${signed(commit)})`,
      met: commit === undefined ? null : cold <= MAX_WARM_ADDED_MS + commit,
    });
  }
  return targets;
}

const dash = (n: number | undefined, digits = 3) => (n === undefined ? '—' : n.toFixed(digits));

function statusCell(p: PhaseResult): string {
  const codes = Object.entries(p.statusCodes)
    .map(([code, n]) => `${code}×${n}`)
    .join(' ');
  const extra = [p.errors ? `errors ${p.errors}` : '', p.timeouts ? `timeouts ${p.timeouts}` : '', p.invalidBodies ? `invalid bodies ${p.invalidBodies}` : '']
    .filter(Boolean)
    .join(', ');
  return [codes, extra].filter(Boolean).join('; ');
}

function rows(l: OutsideLoad): string[] {
  const mode = `${l.streamed ? 'streamed' : 'non-streamed'}, c=${l.connections}`;
  const targets: [string, PhaseResult | undefined][] = [
    ['bare', l.bare],
    ['committing', l.committing],
    [l.cold ? 'gateway, warm keys' : 'gateway', l.gateway],
    ['gateway, cold keys', l.cold],
  ];
  return targets
    .filter((t): t is [string, PhaseResult] => t[1] !== undefined)
    .map(([name, p]) => {
      const isBare = p === l.bare;
      // A cold pass is a fixed number of calls, not a time: its rate is not comparable with the others'.
      const rate = p === l.cold ? '—' : p.requestsPerSecond.toFixed(0);
      const ratio = isBare || p === l.cold ? '' : p === l.gateway ? `**${pct(share(p, l.bare))}**` : pct(share(p, l.bare));
      return (
        `| ${mode} | ${name} | ${rate} | ${ms(p.latencyMs.mean)} | ${ms(p.latencyMs.p50)} | ${ms(p.latencyMs.p99)} | ${ratio} | ` +
        `${isBare ? '' : `${p99Over(p, l.bare).toFixed(2)}×`} | ${isBare ? '' : signed(overBare(p, l.bare))} | ${dash(p.processCpuMsPerCall)} | ` +
        `${dash(p.leaseTakesPerCall)} | ${statusCell(p)} |`
      );
    });
}

export function renderOutsideMarkdown(r: OutsideResult, runNote?: string): string {
  const s = r.settings;
  const e = r.environment;
  const store = `${e.database === 'postgresql' ? 'PostgreSQL' : 'embedded PGlite'}, ${e.redis ? 'Redis' : 'in-process'} rate limits`;
  const committed = r.loads.some((l) => l.committing);
  const met = (t: OutsideTarget) => (t.met === null ? 'not measurable here' : t.met ? 'met' : '**not met**');
  return [
    '',
    HEADING,
    '',
    ...(runNote ? [runNote, ''] : []),
    `Run ${r.date} · Node ${e.node} · ${e.cpu} · ${store} · ${s.keys} live keys over ${s.accounts} accounts, each called in rotation · ${s.rounds} round(s) · ${r.totalSeconds} s in all.`,
    '',
    ...(e.probe ? [`Machine probe (lower is faster): at the start ${probeText(e.probe.start)}; at the end ${probeText(e.probe.end)}.`, ''] : []),
    `Every party is a process of its own: the instant upstream, the bare pass-through${committed ? ' and the committing one' : ''} (bench/server-process.ts), ` +
      'the gateway as `npm start` runs it (`node --max-semi-space-size=32 dist/src/main.js`, a fresh process for each load, ' +
      'stopped with SIGTERM after it), and autocannon in a process per segment.',
    `Each load first gives every target ${s.warmUpSeconds} s of the same load, unmeasured; then the targets take turns ` +
      `(${committed ? 'bare, committing, gateway' : 'bare, gateway'}) in ${s.rounds} round(s), ${s.secondsPerLoad} s each in all.`,
    'Before each gateway segment every key is called once (warm keys: record cached, lease held).',
    `At one connection each round ends with a cold pass: every key called once after its credit lease went back, the gateway's ` +
      `LEASE_IDLE_SECONDS lowered to ${s.leaseIdleSeconds} s (30 by default) so the wait is short; a pass is a number of calls, not a time, so its rate is not shown.`,
    '"lease takes/call" counts the leases the gateway took in a segment per answered call: about 0 says the keys were warm, 1 that every call took one.',
    'Latencies are from every 2xx response, to the last byte (for streams: to `data: [DONE]`); "over bare" is the mean minus the bare ' +
      "pass-through's; process CPU is the whole process's (every thread) per answered call.",
    '',
    '| load | target | req/s | mean ms | p50 ms | p99 ms | req/s / bare | p99 / bare | mean over bare ms | process CPU ms/call | lease takes/call | responses |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...r.loads.flatMap(rows),
    '',
    `Gateway / bare per round: ${r.loads.map((l) => `${l.id} ${l.roundRatios.map(pct).join(' ')}`).join('; ')}.`,
    '',
    `### Against issue 46's targets${e.database === 'postgresql' && e.redis ? '' : ' (set for PostgreSQL + Redis; reported beside on this store)'}`,
    '',
    '| load | target | measured | limit | |',
    '|---|---|---:|---|---|',
    ...r.targets.map((t) => `| ${t.load} | ${t.target} | ${t.measured} | ${t.limit} | ${met(t)} |`),
    '',
    '### Money, checked after every gateway load',
    '',
    "With the gateway process stopped (its shutdown settles its calls and gives its leases back), the bench reads the gateway's",
    'database itself: the checks of the other phases, over every call the gateway answered since it started (key warm-ups,',
    'warm-ups and segments).',
    '',
    ...moneyTable(r.money),
    '',
  ].join('\n');
}

export function outsideSummaryLines(r: OutsideResult): string[] {
  return [
    ...r.loads.map((l) => {
      const parts = [
        `bare ${l.bare.requestsPerSecond.toFixed(0)} req/s p99 ${ms(l.bare.latencyMs.p99)}`,
        ...(l.committing ? [`committing ${l.committing.requestsPerSecond.toFixed(0)} (${signed(overBare(l.committing, l.bare))} ms)`] : []),
        `gateway ${l.gateway.requestsPerSecond.toFixed(0)} req/s = ${pct(share(l.gateway, l.bare))} of bare, p99 ${ms(l.gateway.latencyMs.p99)} (${p99Over(l.gateway, l.bare).toFixed(2)}×), ${signed(overBare(l.gateway, l.bare))} ms`,
        ...(l.cold ? [`cold ${signed(overBare(l.cold, l.bare))} ms (${dash(l.cold.leaseTakesPerCall)} lease takes/call)`] : []),
      ];
      return `(outside ${l.id}) ${parts.join('; ')}`;
    }),
    `(outside) targets: ${r.targets.map((t) => `${t.load} ${t.target} ${t.measured} ${t.met === null ? 'n/a' : t.met ? 'met' : 'NOT MET'}`).join('; ')}`,
    `(outside) money: ${r.money.every((m) => m.ok) ? 'exact after every gateway load' : 'WRONG'}`,
  ];
}
