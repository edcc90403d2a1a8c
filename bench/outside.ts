/**
 * The outside phase: the gateway measured as issue 46 measured it, every party a process of its
 * own (outside-processes.ts) on a store of its own (a scratch PostgreSQL database, or a fresh
 * embedded one), with 1,000 live keys over 100 accounts (BENCH_OUTSIDE_KEYS). For non-streamed
 * and streamed chat at BENCH_CONNECTIONS (32) and at one connection, a fresh gateway process
 * takes turns with the bare and committing pass-throughs after a warm-up; at one connection each
 * round adds a pass of cold keys, called after their leases went back. After every load the
 * gateway stops and the money is checked in its database (outside-store.ts). Reported by
 * outside-report.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../src/config';
import { createGateway } from '../src/gateway';
import { MAX_ACTIVE_KEYS } from '../src/domain/keys/key-service';
import { createScratchDatabase } from '../src/infra/db/scratch-database';
import { benchCatalog, CHAT_BODIES, keyPool, UPSTREAM_KEY } from './chat-setup';
import { checkLedger, newestLedgerId, type MoneyCheck } from './money-check';
import { mergeSegments, type LoadJob, type PhaseResult, type Target } from './phase';
import { machineBusyMs, processCpuMs } from './thread-cpu';
import { probeMachine, probeText } from './machine-probe';
import { runLoadProcess, startGatewayProcess, startServerProcess, type ChildServer, type GatewayProcess } from './outside-processes';
import { leasesTakenBetween, withStore } from './outside-store';
import { outsideTargets, type OutsideLoad, type OutsideResult } from './outside-report';

const WARM_UP_SECONDS = 2;
/**
 * The phase's gateway gives an idle lease back after this long (LEASE_IDLE_SECONDS, 30 by
 * default), so a cold pass waits seconds rather than half a minute. It stays well above the time
 * one connection takes to come round the 1,000 keys (about 4 s at 4 ms a call), so the warm
 * segments keep every lease.
 */
const LEASE_IDLE_SECONDS = 10;
/** The lease book looks for idle leases every second; a close is one transaction more. */
const IDLE_RETURN_SLACK_MS = 2000;

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`);
  return n;
}

const perCall = (ms: number | null, calls: number): number | undefined => (ms === null ? undefined : Math.round((ms / Math.max(1, calls)) * 1000) / 1000);

/** The CPU a process spent (null off Linux) and the machine's busy time over `work`. */
async function spent<T>(pid: number, work: () => Promise<T>): Promise<{ out: T; cpuMs: number | null; machineMs: number | null }> {
  const [cpu0, machine0] = [processCpuMs(pid), machineBusyMs()];
  const out = await work();
  const [cpu1, machine1] = [processCpuMs(pid), machineBusyMs()];
  return { out, cpuMs: cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null, machineMs: machine0 !== null && machine1 !== null ? machine1 - machine0 : null };
}

export interface OutsideOptions {
  log: (line: string) => void;
  /** A PostgreSQL URL to make the phase's scratch database beside; unset: embedded PGlite. */
  databaseUrl?: string;
  redisUrl?: string;
}

export async function runOutsidePhase(opts: OutsideOptions): Promise<OutsideResult> {
  const { log } = opts;
  const started = Date.now();
  const keyCount = positiveInt('BENCH_OUTSIDE_KEYS', 1000);
  const seconds = positiveInt('BENCH_SECONDS', 8);
  const rounds = positiveInt('BENCH_ROUNDS', 3);
  const connections = positiveInt('BENCH_CONNECTIONS', 32);
  const segmentSeconds = Math.max(1, seconds / rounds);
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-outside-'));
  const database = opts.databaseUrl ? await createScratchDatabase(opts.databaseUrl, 'gw_outside') : undefined;
  const store = { databaseUrl: database?.url, dataDir };
  const servers: ChildServer[] = [];
  try {
    const probeAtStart = await probeMachine(database?.url);
    log(`(outside) machine probe: ${probeText(probeAtStart)}`);
    const upstream = await startServerProcess({});
    servers.push(upstream);
    const bare = await startServerProcess({ bareProxyTo: upstream.url });
    servers.push(bare);
    const committing = database ? await startServerProcess({ bareProxyTo: upstream.url, commitTo: database.url }) : undefined;
    if (committing) servers.push(committing);
    const modelsFile = join(dataDir, 'models.json');
    writeFileSync(modelsFile, JSON.stringify(benchCatalog(upstream.url)));
    const env = {
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      DATABASE_URL: database?.url,
      REDIS_URL: opts.redisUrl,
      MODELS_FILE: modelsFile,
      BENCH_UPSTREAM_KEY: UPSTREAM_KEY,
      LEASE_IDLE_SECONDS: String(LEASE_IDLE_SECONDS),
      CHARGE_COMMITS_IN_FLIGHT: process.env.CHARGE_COMMITS_IN_FLIGHT,
      CHARGE_DEADLINE_MS: process.env.CHARGE_DEADLINE_MS,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'error',
    };
    // The keys are made in this process, on the store the gateway process then opens.
    const maker = await createGateway(loadConfig({ ...env, HOST: '127.0.0.1', PORT: '0' }));
    const keys = await keyPool(maker, keyCount).finally(() => maker.close());
    log(
      `(outside) ${keys.length} live keys over ${Math.ceil(keys.length / MAX_ACTIVE_KEYS)} accounts; upstream, bare${committing ? ', committing' : ''} in processes of their own`,
    );

    // BENCH_OUTSIDE_LOADS=json-c1,stream-c32: only those loads (a profile of one, a quick look).
    const only = (process.env.BENCH_OUTSIDE_LOADS ?? '').split(',').filter(Boolean);
    const loads: OutsideLoad[] = [];
    const money: MoneyCheck[] = [];
    for (const c of [connections, 1]) {
      for (const streamed of [false, true]) {
        const id = `${streamed ? 'stream' : 'json'}-c${c}`;
        if (only.length > 0 && !only.includes(id)) continue;
        log(`(outside ${id}) ${rounds} round(s) of bare, ${committing ? 'committing, ' : ''}gateway${c === 1 ? ', cold keys' : ''}: ${seconds} s each`);
        const job = (target: Target, url: string, durationSeconds: number): LoadJob => ({
          id: `outside-${target}-${id}`,
          title: `outside: ${target}, ${streamed ? 'streamed' : 'non-streamed'}, c=${c}`,
          target,
          url,
          streamed,
          body: streamed ? CHAT_BODIES.streamed : CHAT_BODIES.plain,
          expectInBody: streamed ? 'data: [DONE]' : '"chat.completion"',
          path: '/v1/chat/completions',
          keys: target === 'gateway' ? keys : [UPSTREAM_KEY],
          collectCharges: target === 'gateway',
          connections: c,
          durationSeconds,
        });
        const mark = await withStore(store, newestLedgerId);
        const gateway = await startGatewayProcess(env, profileFlags(id), log);
        let result: { load: OutsideLoad; calls: GatewayCalls };
        try {
          result = await runLoad({ id, connections: c, streamed, job, gateway, bare, committing, keys, rounds, segmentSeconds, log });
        } finally {
          await gateway.stop();
        }
        loads.push(result.load);
        const check = await withStore(store, async (db) => {
          for (const [p, windows] of result.calls.windows) {
            let takes = 0;
            for (const [from, to] of windows) takes += await leasesTakenBetween(db, from, to);
            p.leaseTakesPerCall = Math.round((takes / Math.max(1, p.completed2xx)) * 1000) / 1000;
          }
          return checkLedger(db, { phase: `outside-${id}`, answered: result.calls.answered, mayCutOff: result.calls.mayCutOff }, mark);
        });
        money.push(check);
        log(`(outside ${id}) money ${check.ok ? 'exact' : 'WRONG'}: ${JSON.stringify(check)}`);
      }
    }
    const limited = loads.flatMap((l) => [l.gateway, l.cold]).reduce((n, p) => n + (p?.statusCodes['429'] ?? 0), 0);
    if (limited > 0) log(`(outside) WARNING: ${limited} requests were rate-limited (429): raise BENCH_OUTSIDE_KEYS`);
    const probeAtEnd = await probeMachine(database?.url);
    log(`(outside) machine probe at the end: ${probeText(probeAtEnd)}`);
    return {
      date: new Date().toISOString(),
      environment: {
        node: process.version,
        cpu: `${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}`,
        database: database ? 'postgresql' : 'pglite',
        redis: Boolean(opts.redisUrl),
        probe: { start: probeAtStart, end: probeAtEnd },
      },
      settings: {
        keys: keys.length,
        accounts: Math.ceil(keys.length / MAX_ACTIVE_KEYS),
        secondsPerLoad: seconds,
        warmUpSeconds: WARM_UP_SECONDS,
        rounds,
        connections,
        leaseIdleSeconds: LEASE_IDLE_SECONDS,
      },
      loads,
      targets: outsideTargets(loads),
      money,
      totalSeconds: Math.round((Date.now() - started) / 100) / 10,
    };
  } finally {
    for (const server of servers.reverse()) await server.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** BENCH_PROFILE=<dir>: the gateway process of each load writes a CPU profile (and with BENCH_PROFILE_HEAP=1 an allocation profile) of its whole life as it exits. */
function profileFlags(id: string): string[] {
  const dir = process.env.BENCH_PROFILE;
  if (!dir) return [];
  const at = resolve(dir);
  return [
    '--cpu-prof',
    `--cpu-prof-dir=${at}`,
    `--cpu-prof-name=outside-${id}.cpuprofile`,
    '--cpu-prof-interval=200',
    ...(process.env.BENCH_PROFILE_HEAP === '1' ? ['--heap-prof', `--heap-prof-dir=${at}`, `--heap-prof-name=outside-${id}.heapprofile`] : []),
  ];
}

/** Every call the gateway process answered, for the money check, and each measured gateway result's time windows, for its lease takes. */
interface GatewayCalls {
  answered: [string, number | null][];
  mayCutOff: number;
  windows: Map<PhaseResult, [Date, Date][]>;
}

interface LoadParties {
  id: string;
  connections: number;
  streamed: boolean;
  job: (target: Target, url: string, durationSeconds: number) => LoadJob;
  gateway: GatewayProcess;
  bare: ChildServer;
  committing?: ChildServer;
  keys: string[];
  rounds: number;
  segmentSeconds: number;
  log: (line: string) => void;
}

/** One load on a running gateway process: warm-ups, then the rounds; answers the merged results and the gateway's calls. */
async function runLoad(p: LoadParties): Promise<{ load: OutsideLoad; calls: GatewayCalls }> {
  const { id, connections } = p;
  const calls: GatewayCalls = { answered: [], mayCutOff: 0, windows: new Map() };
  // A gateway run: its answered calls kept for the money check, its window for the lease takes.
  const onGateway = async (job: LoadJob): Promise<{ result: PhaseResult; window: [Date, Date] }> => {
    const from = new Date();
    const result = await runLoadProcess(job);
    const window: [Date, Date] = [from, new Date()];
    calls.answered.push(...(result.answered ?? []));
    delete result.answered;
    // A pass of a fixed number of calls waits for every answer; a timed segment may cut one off per connection.
    if (!job.amount) calls.mayCutOff += job.connections;
    return { result, window };
  };
  // Every key called once (32 at a time, or on one connection for the cold pass): each must answer 200 with a valid body.
  const keyPass = async (passConnections: number, what: 'warm' | 'cold') => {
    const job: LoadJob = {
      ...p.job('gateway', p.gateway.url, 1),
      id: `outside-gateway-${what}-keys-${id}`,
      title: `outside: gateway, ${what} keys, ${p.streamed ? 'streamed' : 'non-streamed'}, c=${passConnections}`,
      connections: passConnections,
      amount: p.keys.length,
    };
    const pass = await onGateway(job);
    const r = pass.result;
    if (r.completed2xx !== p.keys.length || r.invalidBodies > 0 || Object.keys(r.statusCodes).some((code) => code !== '200'))
      throw new Error(`outside ${id}: the pass of ${what} keys did not answer every key 200: ${JSON.stringify({ ...r, rawLatencies: undefined })}`);
    return pass;
  };
  const warmKeys = () => keyPass(Math.min(32, p.keys.length), 'warm');
  await warmKeys();
  // Every target gets the load unmeasured first (JIT, connections, the gateway's caches).
  const targets: [Target, string, number][] = [
    ['bare', p.bare.url, p.bare.pid],
    ...(p.committing ? [['committing', p.committing.url, p.committing.pid] as [Target, string, number]] : []),
    ['gateway', p.gateway.url, p.gateway.pid],
  ];
  for (const [target, url] of targets) {
    const job = { ...p.job(target, url, WARM_UP_SECONDS), id: `outside-${target}-${id}-warm-up` };
    if (target === 'gateway') await onGateway(job);
    else await runLoadProcess(job);
  }
  const parts = new Map<string, { results: PhaseResult[]; cpuMs: number | null; machineMs: number | null; windows: [Date, Date][] }>();
  const add = (name: string, result: PhaseResult, cpuMs: number | null, machineMs: number | null, window?: [Date, Date]) => {
    const part = parts.get(name) ?? { results: [], cpuMs: 0, machineMs: 0, windows: [] };
    part.results.push(result);
    part.cpuMs = part.cpuMs !== null && cpuMs !== null ? part.cpuMs + cpuMs : null;
    part.machineMs = part.machineMs !== null && machineMs !== null ? part.machineMs + machineMs : null;
    if (window) part.windows.push(window);
    parts.set(name, part);
  };
  for (let round = 1; round <= p.rounds; round++) {
    for (const [target, url, pid] of targets) {
      const job = p.job(target, url, p.segmentSeconds);
      if (target !== 'gateway') {
        const { out, cpuMs, machineMs } = await spent(pid, () => runLoadProcess(job));
        add(target, out, cpuMs, machineMs);
        continue;
      }
      // Warm keys: each called just before the segment, so the segment finds its lease held.
      await warmKeys();
      const { out, cpuMs, machineMs } = await spent(pid, () => onGateway(job));
      add('gateway', out.result, cpuMs, machineMs, out.window);
    }
    if (connections !== 1) continue;
    // Cold keys: a wait until every lease went back idle, then each key's first call since, one connection.
    await new Promise((ok) => setTimeout(ok, LEASE_IDLE_SECONDS * 1000 + IDLE_RETURN_SLACK_MS));
    const { out, cpuMs, machineMs } = await spent(p.gateway.pid, () => keyPass(1, 'cold'));
    add('cold', out.result, cpuMs, machineMs, out.window);
  }
  const merged = new Map<string, PhaseResult>();
  for (const [name, part] of parts) {
    const m = mergeSegments(part.results);
    m.processCpuMsPerCall = perCall(part.cpuMs, m.completed2xx);
    m.machineCpuMsPerCall = perCall(part.machineMs, m.completed2xx);
    delete m.rawLatencies;
    delete m.answered;
    if (part.windows.length > 0) calls.windows.set(m, part.windows);
    merged.set(name, m);
  }
  const bareParts = parts.get('bare')!.results;
  const load: OutsideLoad = {
    id,
    connections,
    streamed: p.streamed,
    bare: merged.get('bare')!,
    committing: merged.get('committing'),
    gateway: merged.get('gateway')!,
    cold: merged.get('cold'),
    roundRatios: parts.get('gateway')!.results.map((g, i) => Math.round((g.requestsPerSecond / Math.max(1, bareParts[i].requestsPerSecond)) * 1000) / 1000),
  };
  for (const r of [load.bare, load.committing, load.gateway, load.cold])
    if (r)
      p.log(
        `(${r.id}) ${r.requestsPerSecond.toFixed(0)} req/s, mean ${r.latencyMs.mean.toFixed(2)} ms, p50 ${r.latencyMs.p50.toFixed(2)}, p99 ${r.latencyMs.p99.toFixed(2)} ms`,
      );
  return { load, calls };
}
