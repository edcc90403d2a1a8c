/**
 * `npm run bench`: what the gateway adds to an OpenAI-compatible chat call, side by side.
 *
 * First (unless BENCH_OUTSIDE=0) the outside phase (bench/outside.ts): every party a process of
 * its own, the gateway as `npm start` runs it, 1,000 keys over 100 accounts, warm and cold keys at
 * one connection, against issue 46's targets; BENCH_ONLY=outside runs it alone and replaces only
 * its section of the results. Then the in-process phases:
 *
 * Four parties, four event loops: an "instant" upstream (worker thread, answers at once), a bare
 * Node pass-through in front of it (worker thread: node:http + undici, nothing else), the gateway
 * under test (this thread, built with createGateway exactly as `npm start` builds it (and with its
 * GC tuning, src/infra/runtime/gc-tuning.ts), on a fresh
 * embedded PGlite, or on DATABASE_URL / REDIS_URL when those are set), and autocannon (a worker
 * thread per phase). For non-streamed and streamed chat, the three targets take turns in
 * BENCH_ROUNDS (default 3) rounds for BENCH_SECONDS (default 10) each in all at BENCH_CONNECTIONS
 * (default 32) connections, then for BENCH_UNLOADED_SECONDS (default 3) on one connection, where
 * nothing queues; taking turns puts a drift of the machine's speed on all three alike. The gateway is
 * reported as a ratio of the bare pass-through; added latency = gateway minus direct. After every
 * gateway phase the money is checked (money-check.ts) and a failed check fails the bench. Results
 * go to bench/results/latest.{json,md}.
 *
 * Rate limits and billing stay on (60 chat requests per minute per key): the gateway phases
 * rotate the Authorization header over a pool of live keys (10 per account; BENCH_KEYS, default
 * 6,000 over 600 accounts) big enough that no key reaches its limit. Any 429 would show in the
 * status-code column, and the run warns about it.
 *
 * Then (unless BENCH_FANOUT=0) the subscription fan-out phase (bench/fanout.ts): rounds of 1,000 and 10,000 graphql-ws
 * subscribers in child processes on the same gateway: connect rate, memory per socket, job completion → each subscriber,
 * /healthz while they connect and while events fan out. BENCH_ONLY=fanout runs that phase alone and replaces only its
 * section of the results. SIMULATOR_VIDEO_SECONDS (default 0.5 here) sets its jobs' length; the chat phases do not use it.
 *
 * Then (unless BENCH_ROUTES=0) the upstream-routes phase (bench/routes.ts): the benchmarked model
 * on one route against two healthy routes, interleaved, and a model one of whose two routes fails
 * every other call (every client call must answer 200), money checked after each.
 *
 * Then (unless BENCH_REQUEST_LOG=0) the request-log phase (bench/request-log.ts): non-streamed chat
 * at c=32 with the request log recording and with it off, interleaved; money and rows checked.
 * BENCH_ONLY=reqlog runs it alone.
 *
 * Then (unless BENCH_CAPS=0) the capped-keys phase (bench/caps.ts): keys at their daily caps over
 * two instances (PostgreSQL + Redis; one on the embedded database), every key spent exactly to
 * its cap, none past it, no refusal but the cap's or `credits_in_flight`.
 *
 * Then (unless BENCH_AUTH=0) the auth phase (bench/auth.ts): refusals of unknown key ids against
 * wrong secrets of existing ones, their medians side by side and the key reads per unknown id;
 * BENCH_ONLY=auth runs it alone.
 *
 * With BENCH_TRACING=1 the gateway sends OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT) to a
 * collector in a worker thread of its own (otlp-sink.ts), every request sampled: a run beside one
 * without it says what tracing costs. The report names the spans the collector received.
 *
 * Then (unless BENCH_MEDIA=0) the heavy-media phase (bench/media.ts): ten concurrent large image
 * edits while /healthz is polled, reporting its p50/p99/max and edits/s.
 */
import 'reflect-metadata';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config';
import { createGateway, type Gateway } from '../src/gateway';
import { MAX_ACTIVE_KEYS } from '../src/domain/keys/key-service';
import { RATE_LIMITS } from '../src/domain/ratelimit/rate-limiter';
import { benchCatalog, CHAT_BODIES, keyPool, UPSTREAM_KEY } from './chat-setup';
import { mergeSegments, type LoadJob, type PhaseResult } from './phase';
import { renderMarkdown, summaryLines, type BenchReport } from './report';
import { probeMachine, probeText } from './machine-probe';
import { checkMoney, ledgerMark, type MoneyCheck } from './money-check';
import { profiled } from './profiler';
import { machineBusyMs, mainThreadCpuMs } from './thread-cpu';
import { renderFanoutMarkdown, runFanoutPhase, writeFanoutOnly, type FanoutResult } from './fanout';
import { renderMediaMarkdown, runMediaPhase, type MediaResult } from './media';
import { renderAuthMarkdown, runAuthPhase, type AuthResult } from './auth';
import { renderCapsMarkdown, runCapsPhase, type CapsResult } from './caps';
import { renderRoutesMarkdown, routeModels, routesJobs, type RoutesResult } from './routes';
import { renderRequestLogMarkdown, runRequestLogPhase, type RequestLogResult } from './request-log';
import { runOutsidePhase } from './outside';
import { HEADING as OUTSIDE_HEADING, outsideSummaryLines, renderOutsideMarkdown, type OutsideResult } from './outside-report';
import { replaceSection } from './results-section';
import { createScratchDatabase } from '../src/infra/db/scratch-database';
import { tuneGcForRequestServing } from '../src/infra/runtime/gc-tuning';

const SECONDS = positiveInt('BENCH_SECONDS', 10);
const CONNECTIONS = positiveInt('BENCH_CONNECTIONS', 32);
/** Live keys in the rotation; 60 chat requests a minute each, shared by the gateway phases. */
const KEY_POOL = positiveInt('BENCH_KEYS', 6000);
/** The short single-connection pass that shows the added latency without queueing. */
const UNLOADED_SECONDS = positiveInt('BENCH_UNLOADED_SECONDS', 3);
/** Rounds each load's targets take turns in (BENCH_ROUNDS); 1 runs each target once, for its whole time. */
const ROUNDS = positiveInt('BENCH_ROUNDS', 3);
/** Refusals of each kind in the auth phase (BENCH_AUTH_ROUNDS). */
const AUTH_ROUNDS = positiveInt('BENCH_AUTH_ROUNDS', 2000);
/** Simulated video length for the fan-out phase's jobs (test keys: the simulator). */
const SIMULATOR_VIDEO_SECONDS = process.env.SIMULATOR_VIDEO_SECONDS || '0.5';
/** BENCH_TRACING=1: the gateway traces every request to a collector of the bench's own. */
const TRACING = process.env.BENCH_TRACING === '1';
const RESULTS_DIR = resolve(__dirname, '..', '..', 'bench', 'results');

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`);
  return n;
}

/** Adds a reading's change to a target's sum; one reading missing (off Linux) makes the sum null for good. */
function addSpent(sums: Map<string, number | null>, target: string, before: number | null, after: number | null): void {
  const sum = sums.get(target) ?? 0;
  sums.set(target, sum !== null && before !== null && after !== null ? sum + after - before : null);
}

/** A sum of ms over answered calls, to the µs; undefined when there was nothing to measure. */
const perCall = (ms: number | null | undefined, calls: number): number | undefined =>
  ms === undefined || ms === null ? undefined : Math.round((ms / Math.max(1, calls)) * 1000) / 1000;

/** CLOCK_MONOTONIC in seconds, as perf prints its sample times. */
const monotonicSeconds = (): string => (Number(process.hrtime.bigint() / 1000n) / 1e6).toFixed(6);

const log = (line: string) => process.stdout.write(`[bench] ${line}\n`);

interface ServerWorker {
  url: string;
  /** The collector's counts (otlp-sink.ts); only a sink answers. */
  counts(): Promise<{ exports: number; spans: number }>;
  /** CPU time of the worker's thread so far, ms (null off Linux). */
  cpuMs(): Promise<number | null>;
  close(): Promise<void>;
}

async function startUpstream(): Promise<ServerWorker> {
  return startServerWorker('upstream-worker.js');
}

async function startServerWorker(file: string, workerData?: unknown): Promise<ServerWorker> {
  const worker = new Worker(join(__dirname, file), { workerData });
  const port = await new Promise<number>((ok, fail) => {
    worker.once('message', (m: { port: number }) => ok(m.port));
    worker.once('error', fail);
  });
  return {
    url: `http://127.0.0.1:${port}`,
    counts: () =>
      new Promise<{ exports: number; spans: number }>((ok) => {
        worker.once('message', (m: { counts: { exports: number; spans: number } }) => ok(m.counts));
        worker.postMessage('counts');
      }),
    cpuMs: () =>
      new Promise<number | null>((ok) => {
        worker.once('message', (m: { cpuMs: number | null }) => ok(m.cpuMs));
        worker.postMessage('cpu');
      }),
    close: () =>
      new Promise<void>((ok) => {
        worker.once('exit', () => ok());
        worker.postMessage('close');
        setTimeout(() => void worker.terminate(), 2000).unref();
      }),
  };
}

function runPhase(job: LoadJob): Promise<PhaseResult> {
  return new Promise((ok, fail) => {
    const worker = new Worker(join(__dirname, 'load-worker.js'), { workerData: job });
    worker.once('message', (m: { result?: PhaseResult; error?: string }) => (m.result ? ok(m.result) : fail(new Error(m.error))));
    worker.once('error', fail);
    worker.once('exit', (code) => fail(new Error(`load worker exited with code ${code} before reporting`)));
  });
}

/** One call of each kind through the gateway before measuring: it must answer, and bill. */
async function smokeTest(gatewayUrl: string, key: string, bodies: { plain: string; streamed: string }): Promise<void> {
  for (const [kind, body, expected] of [
    ['plain', bodies.plain, '"chat.completion"'],
    ['streamed', bodies.streamed, '[DONE]'],
  ] as const) {
    const res = await fetch(`${gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
    });
    const text = await res.text();
    if (res.status !== 200 || !text.includes(expected)) throw new Error(`smoke test (${kind}) failed: ${res.status} ${text.slice(0, 300)}`);
  }
}

/** One call per key, 32 at a time; every one must answer 200. */
async function warmUp(gatewayUrl: string, keys: string[], body: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++];
      const res = await fetch(`${gatewayUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
      });
      await res.text();
      if (res.status !== 200) throw new Error(`warm-up call answered ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

const fmt = (r: PhaseResult) =>
  `${r.requestsPerSecond.toFixed(0)} req/s, p50 ${r.latencyMs.p50.toFixed(2)} ms, p99 ${r.latencyMs.p99.toFixed(2)} ms` +
  (Object.keys(r.statusCodes).some((c) => c !== '200') || r.errors || r.invalidBodies
    ? ` (status ${JSON.stringify(r.statusCodes)}, errors ${r.errors}, invalid bodies ${r.invalidBodies})`
    : '');

async function main(): Promise<void> {
  // As main.ts does for `npm start`; process-wide, so the pass-throughs' threads run with it too.
  tuneGcForRequestServing();
  const started = Date.now();
  // The outside phase first (bench/outside.ts), its parties in processes of their own, before this process starts any.
  const only = process.env.BENCH_ONLY;
  const outside =
    only === 'outside' || (only === undefined && process.env.BENCH_OUTSIDE !== '0')
      ? await runOutsidePhase({ log, databaseUrl: process.env.DATABASE_URL, redisUrl: process.env.REDIS_URL })
      : undefined;
  if (outside) for (const line of outsideSummaryLines(outside)) log(line);
  if (only === 'outside') {
    // Its section of latest.{md,json} is replaced, the other phases' kept.
    mkdirSync(RESULTS_DIR, { recursive: true });
    replaceSection(RESULTS_DIR, OUTSIDE_HEADING, renderOutsideMarkdown(outside!, 'Run on its own (`BENCH_ONLY=outside`).'), 'outside', outside!);
    log(`wrote the outside section of ${join(RESULTS_DIR, 'latest.md')} and latest.json`);
    failUnlessExact(outside!);
    return;
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-'));
  const upstream = await startUpstream();
  const bare = await startServerWorker('upstream-worker.js', { bareProxyTo: upstream.url });
  // With DATABASE_URL, a database of the bench's own, dropped afterwards.
  const database = process.env.DATABASE_URL
    ? await createScratchDatabase(process.env.DATABASE_URL, 'gw_bench')
    : { url: undefined, drop: async () => undefined };
  // With PostgreSQL, the yardstick that keeps the charge-before-answer rule (committing-proxy.ts).
  const committing = database.url ? await startServerWorker('upstream-worker.js', { bareProxyTo: upstream.url, commitTo: database.url }) : undefined;
  // The machine's speed as the run begins and as it ends (machine-probe.ts), for reading runs side by side.
  const collector = TRACING ? await startServerWorker('upstream-worker.js', { otlpSink: true }) : undefined;
  const probeAtStart = await probeMachine(database.url);
  log(`machine probe: ${probeText(probeAtStart)}`);
  let gateway: Gateway | undefined;
  let second: Gateway | undefined;
  try {
    const catalog = benchCatalog(upstream.url, routeModels(upstream.url));
    const modelsFile = join(dataDir, 'models.json');
    writeFileSync(modelsFile, JSON.stringify(catalog));
    const gatewayEnv = {
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      REDIS_URL: process.env.REDIS_URL,
      CHARGE_COMMITS_IN_FLIGHT: process.env.CHARGE_COMMITS_IN_FLIGHT,
      CHARGE_DEADLINE_MS: process.env.CHARGE_DEADLINE_MS,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'error',
      MODELS_FILE: modelsFile,
      // Calls cut off at the end of a phase log upstream_error warnings: not news here.
      BENCH_UPSTREAM_KEY: UPSTREAM_KEY,
      BENCH_UPSTREAM_KEY_2: UPSTREAM_KEY,
      SIMULATOR_VIDEO_SECONDS,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector?.url,
      OTEL_BSP_SCHEDULE_DELAY: collector ? '1000' : undefined,
    };
    gateway = await createGateway(loadConfig(gatewayEnv));
    const gatewayUrl = await gateway.listen();
    const store = `${database.url ? 'PostgreSQL' : 'embedded PGlite'}, ${process.env.REDIS_URL ? 'Redis' : 'in-process'} rate limits`;
    log(`gateway ${gatewayUrl} (${store}), upstream ${upstream.url}`);
    if (process.env.BENCH_ONLY === 'fanout') {
      // The fan-out phase alone: its section of latest.{md,json} is replaced, the other phases' kept.
      const only = await runFanoutPhase(gateway, gatewayUrl, { log, simulatorVideoSeconds: gateway.config.simulatorVideoSeconds });
      const environment = {
        node: process.version,
        cpu: `${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}`,
        database: database.url ? 'postgresql' : 'pglite',
        redis: Boolean(process.env.REDIS_URL),
      };
      writeFanoutOnly(RESULTS_DIR, only, environment);
      if (only.error) throw new Error(`the fan-out phase failed: ${only.error}`);
      return;
    }

    const keys = await keyPool(gateway, KEY_POOL);
    log(`${keys.length} live keys over ${Math.ceil(keys.length / MAX_ACTIVE_KEYS)} accounts (${RATE_LIMITS.chat} chat requests/min each)`);

    const { plain, streamed } = CHAT_BODIES;
    await smokeTest(gatewayUrl, keys[0], { plain, streamed });
    // Steady state: before each gateway phase one call per key, so the phase does not include a
    // key's first sight (its record cached, its credit lease taken; the money check of the phase
    // before gave every lease back): one-off costs of a key coming into use. The calls are the
    // phase's own kind, so that its code is compiled before it is measured too: warmed with plain
    // calls, the first streamed round ran at half the rate of the next two.
    const warm = async (body: string) => {
      const warmStarted = Date.now();
      await warmUp(gatewayUrl, keys, body);
      log(`warm-up: one call for each of ${keys.length} keys in ${((Date.now() - warmStarted) / 1000).toFixed(1)} s`);
    };

    // The smoke test spent two requests of keys[0]: start the rotation after it.
    const gatewayKeys = [...keys.slice(1), keys[0]];
    const servers = { direct: upstream, bare, ...(committing ? { committing } : {}) } as Record<string, ServerWorker>;
    const targets = [
      { target: 'direct' as const, url: upstream.url, keys: [UPSTREAM_KEY] },
      { target: 'bare' as const, url: bare.url, keys: [UPSTREAM_KEY] },
      ...(committing ? [{ target: 'committing' as const, url: committing.url, keys: [UPSTREAM_KEY] }] : []),
      { target: 'gateway' as const, url: gatewayUrl, keys: gatewayKeys, collectCharges: true },
    ];
    const modes = [
      { streamed: false, body: plain, expectInBody: '"chat.completion"' },
      { streamed: true, body: streamed, expectInBody: 'data: [DONE]' },
    ];
    const results: PhaseResult[] = [];
    const money: MoneyCheck[] = [];
    // BENCH_ONLY=auth / reqlog: that phase alone, after the key pool.
    const onlyOnePhase = process.env.BENCH_ONLY === 'auth' || process.env.BENCH_ONLY === 'reqlog';
    // BENCH_ONLY=c1 / c32: one of the two loads alone (a profile of one, a quick look).
    const groups = (
      [
        [CONNECTIONS, SECONDS],
        [1, UNLOADED_SECONDS],
      ] as const
    ).filter(([c]) => !onlyOnePhase && process.env.BENCH_ONLY !== (c === 1 ? 'c32' : 'c1'));
    const total = groups.length * modes.length;
    let done = 0;
    for (const [connections, durationSeconds] of groups) {
      for (const mode of modes) {
        // One load, three or four targets, interleaved: ROUNDS rounds of direct, bare, (committing,) gateway segments,
        // so a drift of this machine's speed (it happens, within minutes) falls on all three alike.
        const kind = `${mode.streamed ? 'stream' : 'json'}-c${connections}`;
        const jobs: LoadJob[] = targets.map((t) => ({
          id: `${t.target}-${kind}`,
          title: `${t.target}, ${mode.streamed ? 'streamed' : 'non-streamed'}, c=${connections}`,
          ...t,
          ...mode,
          path: '/v1/chat/completions',
          connections,
          durationSeconds: Math.max(1, durationSeconds / ROUNDS),
        }));
        log(
          `(${kind}) ${++done}/${total} ${ROUNDS} round(s) of ${targets.map((t) => t.target).join(', ')} at c=${connections}, ${mode.streamed ? 'streamed' : 'non-streamed'}: ${durationSeconds} s each…`,
        );
        await warm(mode.body);
        // The direct upstream and the pass-throughs get a second of the same load, unmeasured,
        // as the gateway gets its warm-up calls, so that no target's first segment measures its
        // own warm-up (JIT, connections).
        for (const job of jobs) if (job.target !== 'gateway') await runPhase({ ...job, durationSeconds: 1 });
        const mark = await ledgerMark(gateway);
        const parts = new Map<string, PhaseResult[]>(jobs.map((j) => [j.target, []]));
        // The gateway's own event loop: how busy it was, per answered call (its CPU cost per call).
        let busyMs = 0;
        let cpuMs: number | null = 0;
        // The pass-throughs' own threads too: the gateway's CPU per call beside theirs, in the same rounds.
        const passCpuMs = new Map<string, number | null>();
        // And the whole machine's, per target (every process: PostgreSQL and Redis included).
        const machineMs = new Map<string, number | null>();
        const onMachine = async <T>(target: string, work: () => Promise<T>): Promise<T> => {
          const before = machineBusyMs();
          const out = await work();
          addSpent(machineMs, target, before, machineBusyMs());
          return out;
        };
        for (let round = 1; round <= ROUNDS; round++) {
          for (const job of jobs) {
            if (job.target !== 'gateway') {
              const server = servers[job.target];
              const before = await server.cpuMs();
              parts.get(job.target)!.push(await onMachine(job.target, () => runPhase(job)));
              addSpent(passCpuMs, job.target, before, await server.cpuMs());
              continue;
            }
            // BENCH_MARKS=1: each gateway segment's monotonic-clock window, for `perf record -k CLOCK_MONOTONIC` and `perf script --time`.
            if (process.env.BENCH_MARKS === '1') log(`segment ${job.id} round ${round} starts at ${monotonicSeconds()}`);
            const elu = performance.eventLoopUtilization();
            const cpuBefore = mainThreadCpuMs();
            parts.get(job.target)!.push(await onMachine(job.target, () => profiled(ROUNDS > 1 ? `${job.id}-r${round}` : job.id, () => runPhase(job))));
            busyMs += performance.eventLoopUtilization(elu).active;
            if (process.env.BENCH_MARKS === '1') log(`segment ${job.id} round ${round} ends at ${monotonicSeconds()}`);
            const cpuAfter = mainThreadCpuMs();
            cpuMs = cpuMs !== null && cpuBefore !== null && cpuAfter !== null ? cpuMs + cpuAfter - cpuBefore : null;
          }
        }
        const merged = jobs.map((j) => mergeSegments(parts.get(j.target)!));
        const gw = merged.find((r) => r.target === 'gateway')!;
        const calls = Math.max(1, gw.completed2xx);
        gw.gatewayBusyMsPerCall = Math.round((busyMs / calls) * 1000) / 1000;
        gw.gatewayUtilization = Math.round((busyMs / (gw.durationSeconds * 1000)) * 1000) / 1000;
        if (cpuMs !== null) gw.gatewayCpuMsPerCall = Math.round((cpuMs / calls) * 1000) / 1000;
        for (const r of merged) {
          r.machineCpuMsPerCall = perCall(machineMs.get(r.target), r.completed2xx);
          r.threadCpuMsPerCall = perCall(passCpuMs.get(r.target), r.completed2xx);
        }
        const bareParts = parts.get('bare')!;
        gw.roundRatios = parts.get('gateway')!.map((g, i) => Math.round((g.requestsPerSecond / Math.max(1, bareParts[i].requestsPerSecond)) * 1000) / 1000);
        for (const r of merged) log(`(${r.id}) ${fmt(r)}`);
        const check = await checkMoney(gateway, gw, mark);
        money.push(check);
        log(`(${gw.id}) money ${check.ok ? 'exact' : 'WRONG'}: ${JSON.stringify(check)}`);
        for (const r of merged) {
          delete r.answered;
          delete r.rawLatencies;
          results.push(r);
        }
      }
    }
    const limited = results.reduce((n, r) => n + (r.statusCodes['429'] ?? 0), 0);
    if (limited > 0) log(`WARNING: ${limited} requests were rate-limited (429): raise BENCH_KEYS`);

    // Upstream routes (bench/routes.ts): one route against two, interleaved; then a route failing every other call.
    let routes: RoutesResult | undefined;
    if (process.env.BENCH_ROUTES !== '0' && process.env.BENCH_ONLY === undefined) {
      const jobs = routesJobs(gatewayUrl, gatewayKeys, Math.max(1, SECONDS / ROUNDS), CONNECTIONS);
      await warm(plain);
      for (const job of Object.values(jobs)) await runPhase({ ...job, durationSeconds: 1 });
      const parts = { oneRoute: [] as PhaseResult[], twoRoutes: [] as PhaseResult[], flaky: [] as PhaseResult[] };
      let mark = await ledgerMark(gateway);
      for (let round = 0; round < ROUNDS; round++) for (const k of ['oneRoute', 'twoRoutes'] as const) parts[k].push(await runPhase(jobs[k]));
      const [oneRoute, twoRoutes] = [mergeSegments(parts.oneRoute), mergeSegments(parts.twoRoutes)];
      const both = { ...twoRoutes, id: 'routes-one-and-two', answered: [...(oneRoute.answered ?? []), ...(twoRoutes.answered ?? [])], segments: 2 * ROUNDS };
      money.push(await checkMoney(gateway, both, mark));
      mark = await ledgerMark(gateway);
      for (let round = 0; round < ROUNDS; round++) parts.flaky.push(await runPhase(jobs.flaky));
      const flaky = mergeSegments(parts.flaky);
      money.push(await checkMoney(gateway, flaky, mark));
      for (const r of [oneRoute, twoRoutes, flaky]) {
        log(`(${r.id}) ${fmt(r)}`);
        delete r.answered;
        delete r.rawLatencies;
      }
      const flakyNot200 = Object.entries(flaky.statusCodes).reduce((n, [code, count]) => n + (code === '200' ? 0 : count), 0) + flaky.errors;
      routes = {
        oneRoute,
        twoRoutes,
        flaky,
        twoRoutesRatio: Math.round((twoRoutes.requestsPerSecond / Math.max(1, oneRoute.requestsPerSecond)) * 1000) / 1000,
        flakyNot200,
      };
      log(`(routes) two/one ${routes.twoRoutesRatio}, flaky not 200: ${flakyNot200}; money ${money.slice(-2).every((m) => m.ok) ? 'exact' : 'WRONG'}`);
    }
    // The request log's cost (bench/request-log.ts): rounds with it recording and with it off.
    let requestLog: RequestLogResult | undefined;
    let requestLogSegments = 0;
    if (process.env.BENCH_REQUEST_LOG !== '0' && (process.env.BENCH_ONLY === undefined || process.env.BENCH_ONLY === 'reqlog')) {
      const phase = await runRequestLogPhase(gateway, {
        gatewayUrl,
        keys: gatewayKeys,
        seconds: SECONDS,
        rounds: ROUNDS,
        connections: CONNECTIONS,
        // BENCH_PROFILE: a profile of each segment (reqlog-on-1, reqlog-off-2, …).
        runPhase: (job) => profiled(`${job.id}-${++requestLogSegments}`, () => runPhase(job)),
        warm,
      });
      money.push(phase.money);
      requestLog = phase.result;
      for (const r of [requestLog.on, requestLog.off]) log(`(${r.id}) ${fmt(r)}`);
      log(`(reqlog) on/off ${requestLog.ratio}, rows ${requestLog.rows} for ${requestLog.answeredOn} answered; money ${phase.money.ok ? 'exact' : 'WRONG'}`);
    }
    // Daily caps across instances (bench/caps.ts): a second instance on the same PostgreSQL and Redis.
    let caps: CapsResult | undefined;
    if (process.env.BENCH_CAPS !== '0' && !onlyOnePhase) {
      second = database.url && process.env.REDIS_URL ? await createGateway(loadConfig({ ...gatewayEnv, DATA_DIR: join(dataDir, 'second') })) : undefined;
      caps = await runCapsPhase(gateway, [gatewayUrl, ...(second ? [await second.listen()] : [])]);
      log(`(caps) ${JSON.stringify(caps)}`);
      await second?.close();
      second = undefined;
    }
    // Refused keys (bench/auth.ts): unknown key ids against wrong secrets of existing ones.
    const auth: AuthResult | undefined =
      process.env.BENCH_AUTH === '0' || process.env.BENCH_ONLY === 'reqlog' ? undefined : await runAuthPhase(gateway, gatewayUrl, gatewayKeys, AUTH_ROUNDS);
    if (auth) log(`(auth) ${JSON.stringify(auth)}`);
    // Subscription fan-out (bench/fanout.ts), after the chat phases and their money checks.
    const fanout: FanoutResult | undefined =
      process.env.BENCH_FANOUT === '0' || onlyOnePhase
        ? undefined
        : await runFanoutPhase(gateway, gatewayUrl, { log, simulatorVideoSeconds: gateway.config.simulatorVideoSeconds });
    // Heavy media (bench/media.ts): ten concurrent large image edits while /healthz is polled.
    const running = gateway;
    const media: MediaResult | undefined =
      process.env.BENCH_MEDIA === '0' || onlyOnePhase ? undefined : await profiled('media', () => runMediaPhase(running, gatewayUrl, { log }));
    const probeAtEnd = await probeMachine(database.url);
    log(`machine probe at the end: ${probeText(probeAtEnd)}`);
    const batches = gateway.services.chargeBatcher.stats;
    const report: BenchReport & {
      routes?: RoutesResult;
      requestLog?: RequestLogResult;
      caps?: CapsResult;
      auth?: AuthResult;
      fanout?: FanoutResult;
      media?: MediaResult;
      outside?: OutsideResult;
    } = {
      date: new Date().toISOString(),
      environment: {
        node: process.version,
        platform: `${process.platform} ${process.arch}`,
        cpu: `${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}`,
        database: database.url ? 'postgresql' : 'pglite',
        redis: Boolean(process.env.REDIS_URL),
        probe: { start: probeAtStart, end: probeAtEnd },
        tracing: collector ? await collector.counts() : undefined,
      },
      settings: {
        secondsPerPhase: SECONDS,
        unloadedSecondsPerPhase: UNLOADED_SECONDS,
        rounds: ROUNDS,
        connections: CONNECTIONS,
        keyPool: keys.length,
        accounts: Math.ceil(keys.length / MAX_ACTIVE_KEYS),
        maxTokens: 16,
      },
      phases: results,
      money,
      chargesPerCommit: batches.commits ? Math.round((batches.charges / batches.commits) * 10) / 10 : 0,
      totalSeconds: Math.round((Date.now() - started) / 100) / 10,
      routes,
      requestLog,
      caps,
      auth,
      fanout,
      media,
      outside,
    };
    mkdirSync(RESULTS_DIR, { recursive: true });
    writeFileSync(join(RESULTS_DIR, 'latest.json'), JSON.stringify(report, null, 2) + '\n');
    writeFileSync(
      join(RESULTS_DIR, 'latest.md'),
      renderMarkdown(report) +
        (outside ? renderOutsideMarkdown(outside) : '') +
        (routes ? renderRoutesMarkdown(routes) : '') +
        (requestLog ? renderRequestLogMarkdown(requestLog) : '') +
        (caps ? renderCapsMarkdown(caps) : '') +
        (auth ? renderAuthMarkdown(auth) : '') +
        (fanout ? renderFanoutMarkdown(fanout) : '') +
        (media ? renderMediaMarkdown(media) : ''),
    );
    for (const line of summaryLines(report)) log(line);
    log(`wrote ${join(RESULTS_DIR, 'latest.md')} and latest.json in ${report.totalSeconds} s`);
    const wrong = money.filter((m) => !m.ok);
    if (wrong.length > 0) throw new Error(`the money check failed after ${wrong.map((m) => m.phase).join(', ')}`);
    if (requestLog && !requestLog.rowsOk)
      throw new Error(`the request-log phase found the log wrong: ${JSON.stringify({ ...requestLog, on: undefined, off: undefined })}`);
    if (caps && !caps.ok) throw new Error(`the capped-keys phase found the money wrong: ${JSON.stringify(caps)}`);
    if (fanout?.error) throw new Error(`the fan-out phase failed: ${fanout.error}`);
    if (media?.error) throw new Error(`the heavy-media phase failed: ${media.error}`);
    if (outside) failUnlessExact(outside);
  } finally {
    await second?.close();
    await gateway?.close();
    await bare.close();
    await committing?.close();
    await upstream.close();
    await collector?.close();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function failUnlessExact(outside: OutsideResult): void {
  const wrong = outside.money.filter((m) => !m.ok);
  if (wrong.length > 0) throw new Error(`the money check failed after ${wrong.map((m) => m.phase).join(', ')}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
