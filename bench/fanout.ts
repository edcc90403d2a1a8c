/**
 * The subscription fan-out phase of `npm run bench`: graphql-ws subscribers on the one gateway
 * the bench runs, in rounds of BENCH_FANOUT_CONNECTIONS (default "1000,10000") sockets, and how
 * fast a job's completion reaches each of them while /healthz keeps answering.
 *
 * The clients live in child processes (bench/fanout-clients.ts, at most BENCH_FANOUT_PER_PROCESS
 * sockets each, default 5,000): their sockets share neither the gateway's event loop (the latency
 * would be the clients' own queueing) nor its process (the gateway's memory is one of the
 * figures). A prober process (bench/healthz-prober.ts) sends GET /healthz every 10 ms (BENCH_FANOUT_PROBE_MS) throughout.
 * In each round all clients connect with one live API key of one account, each subscribes to
 * `videoJobsUpdated`, and BENCH_FANOUT_JOBS (default 5) video jobs (after a warm-up job) are
 * queued one at a time with test keys of the same account (free, served by the simulator).
 *
 * Measured per round:
 *  - connect rate: sockets opened and acknowledged (connection_init checked the key) per second;
 *  - memory per socket: the gateway's heap / external / RSS after forced GC, before and after the
 *    connections are open, then again with one subscription on each;
 *  - fan-out latency: from the moment the job's COMPLETED event is published (JobFinisher calls
 *    bus.publish right after the commit; the bench wraps that method to stamp it) to the moment
 *    each client's graphql-ws `next` callback runs, in its process. Every side uses
 *    performance.timeOrigin + performance.now(); each child's clock offset is estimated over IPC;
 *  - /healthz latency while the sockets connect and while each job fans out (probes whose time
 *    in flight overlaps the window), and the gateway's longest event-loop stall in those windows
 *    (perf_hooks.monitorEventLoopDelay).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { writeFileSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Gateway } from '../src/gateway';
import type { JobEvent, JobEventBus } from '../src/domain/events/job-events';
import { RATE_LIMITS } from '../src/domain/ratelimit/rate-limiter';
import { MAX_ACTIVE_KEYS } from '../src/domain/keys/key-service';
import { FANOUT_BATCH } from '../src/infra/events/local-event-bus';
import { percentile, stallMs } from './phase';
import { profiled } from './profiler';
import type { ChildMessage, ParentMessage } from './fanout-clients';
import { clientKind, type ClientKind } from './fanout-connections';

const CLIENT_LABEL: Record<ClientKind, string> = { wire: 'a frame reader on raw sockets (bench/graphql-ws-wire.ts)', 'graphql-ws': 'graphql-ws createClient over ws' };
import type { ProberCommand, ProberMessage } from './healthz-prober';

export interface MemorySnapshot {
  rssMB: number;
  heapUsedMB: number;
  externalMB: number;
  arrayBuffersMB: number;
}

export interface FanoutLatency {
  first: number;
  p50: number;
  p99: number;
  /** The last subscriber reached. */
  max: number;
}

export interface Probes {
  count: number;
  p50: number;
  p99: number;
  max: number;
  /** Probes answered other than 200 (or not at all). */
  failed: number;
}

export interface FanoutJob {
  id: string;
  status: string;
  /** Subscribers that received the terminal event / subscriptions running. */
  received: number;
  expected: number;
  /** publish() called → the bench's own bus listener ran (the Redis round trip, with Redis). */
  publishToBusMs: number;
  /** The gateway's longest event-loop stall from publish to the last client's report, ms. */
  loopStallMs: number;
  /** CPU the client processes spent between their first and last receipt (summed). */
  clientCpuMs: number;
  latencyMs: FanoutLatency;
}

export interface FanoutRound {
  connections: number;
  clientProcesses: number;
  /** Loopback addresses the clients connected from (the gateway's per-address cap holds for each). */
  sourceAddresses: number;
  open: { ok: number; failed: number; seconds: number; perSecond: number; failures: string[] };
  subscribeSeconds: number;
  memory: {
    baseline: MemorySnapshot;
    idle: MemorySnapshot;
    subscribed: MemorySnapshot;
    /** (idle − baseline) / connections, KiB. */
    perIdleConnectionKB: { heapUsed: number; external: number; rss: number };
    /** (subscribed − idle) / subscriptions, KiB. */
    perSubscriptionKB: { heapUsed: number; external: number; rss: number };
    clientProcessRssMB: number;
  };
  clocks: Array<{ offsetMs: number; rttMs: number; corrected: boolean }>;
  warmup: FanoutJob | null;
  jobs: FanoutJob[];
  /** Every subscriber of every measured job, pooled. */
  overallMs: FanoutLatency & { samples: number; meanLast: number };
  healthz: { connect: Probes; subscribe: Probes; fanout: Probes };
  loopStallMs: { connect: number; fanout: number };
  seconds: number;
  error?: string;
}

export interface FanoutResult {
  settings: { rounds: number[]; capPerAddress: number; jobs: number; subscription: string; simulatorVideoSeconds: number; perProcess: number; probeEveryMs: number; batch: number; clients: string };
  eventBus: 'in-process' | 'redis';
  gc: 'global.gc (--expose-gc)' | 'v8 flag at run time' | 'none';
  rounds: FanoutRound[];
  seconds: number;
  error?: string;
}

const positiveInt = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`);
  return n;
};

const positiveInts = (name: string, fallback: number[]): number[] => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const list = raw.split(',').map((p) => Number(p.trim()));
  if (list.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error(`${name} must be comma-separated positive integers`);
  return list;
};

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const r1 = (n: number) => Math.round(n * 10) / 10;
const r3 = (n: number) => Math.round(n * 1000) / 1000;
const TEXT_MODEL = 'svc-2.5-preview-text-to-video';
const JOB_FIELDS = 'id status url reason creditsCharged creditsUsed updatedAt';
/**
 * /healthz answers after a `select 1`: on the embedded database that query waits its turn on the
 * one connection, so probing much faster than every few milliseconds measures the bench's own
 * queue of probes rather than the gateway.
 */
const PROBE_EVERY_MS = positiveInt('BENCH_FANOUT_PROBE_MS', 10);
const OPEN_CONCURRENCY = 64;

/** global.gc under --expose-gc; otherwise the flag set at run time (works on Node 20), else none. */
function findGc(): { gc?: () => void; how: FanoutResult['gc'] } {
  const g = (globalThis as { gc?: () => void }).gc;
  if (typeof g === 'function') return { gc: g, how: 'global.gc (--expose-gc)' };
  try {
    setFlagsFromString('--expose-gc');
    const fn = runInNewContext('gc') as unknown;
    if (typeof fn === 'function') return { gc: fn as () => void, how: 'v8 flag at run time' };
  } catch {
    /* no forced GC */
  }
  return { how: 'none' };
}

async function snapshot(gc: (() => void) | undefined): Promise<MemorySnapshot> {
  // Let sockets and timers settle, then collect twice (the second pass takes what the first freed).
  await sleep(300);
  gc?.();
  await sleep(50);
  gc?.();
  const m = process.memoryUsage();
  const mb = (n: number) => r1(n / 1048576);
  return { rssMB: mb(m.rss), heapUsedMB: mb(m.heapUsed), externalMB: mb(m.external), arrayBuffersMB: mb(m.arrayBuffers) };
}

function perItemKB(after: MemorySnapshot, before: MemorySnapshot, n: number) {
  const kb = (a: number, b: number) => (n > 0 ? r1(((a - b) * 1024) / n) : 0);
  return { heapUsed: kb(after.heapUsedMB, before.heapUsedMB), external: kb(after.externalMB, before.externalMB), rss: kb(after.rssMB, before.rssMB) };
}

function latency(samples: number[]): FanoutLatency {
  const sorted = Float64Array.from(samples).sort();
  return { first: r3(sorted[0] ?? 0), p50: r3(percentile(sorted, 50)), p99: r3(percentile(sorted, 99)), max: r3(sorted[sorted.length - 1] ?? 0) };
}

type Sample = [sentAt: number, ms: number, status: number];

/** The probes whose time in flight overlaps any of the windows. */
function probesIn(samples: Sample[], windows: Array<[number, number]>): Probes {
  const hit = samples.filter(([t, ms]) => windows.some(([a, b]) => t <= b && t + ms >= a));
  const sorted = Float64Array.from(hit.map(([, ms]) => ms)).sort();
  return {
    count: hit.length,
    p50: r3(percentile(sorted, 50)),
    p99: r3(percentile(sorted, 99)),
    max: r3(sorted[sorted.length - 1] ?? 0),
    failed: hit.filter(([, , status]) => status !== 200).length,
  };
}


/** A child's IPC messages, kept until a waiter takes them (a job may finish before anyone waits). */
class Inbox<In extends { type: string }, Out> {
  private readonly messages: In[] = [];
  private readonly waiters: Array<{ match: (m: In) => boolean; ok: (m: In) => void }> = [];
  private exit: string | null = null;

  constructor(readonly child: ChildProcess) {
    child.on('message', (m: In) => {
      const i = this.waiters.findIndex((w) => w.match(m));
      if (i >= 0) this.waiters.splice(i, 1)[0]!.ok(m);
      else this.messages.push(m);
    });
    child.once('exit', (code, signal) => {
      this.exit = `child process exited (code ${code}, signal ${signal})`;
    });
  }

  send(m: Out): void {
    this.child.send(m as object);
  }

  wait<T extends In['type']>(type: T, timeoutMs: number, what: string, match: (m: Extract<In, { type: T }>) => boolean = () => true): Promise<Extract<In, { type: T }>> {
    const fits = (m: In): boolean => m.type === 'fatal' || (m.type === type && match(m as Extract<In, { type: T }>));
    const unwrap = (m: In) => {
      if (m.type === 'fatal') throw new Error(`child process: ${(m as unknown as { error: string }).error}`);
      return m as Extract<In, { type: T }>;
    };
    const queued = this.messages.findIndex(fits);
    if (queued >= 0) return Promise.resolve().then(() => unwrap(this.messages.splice(queued, 1)[0]!));
    if (this.exit) return Promise.reject(new Error(`${this.exit} while waiting for ${what}`));
    return new Promise((ok, fail) => {
      const waiter = {
        match: fits,
        ok: (m: In) => {
          clearTimeout(timer);
          this.child.off('exit', onExit);
          try {
            ok(unwrap(m));
          } catch (err) {
            fail(err);
          }
        },
      };
      const drop = () => this.waiters.splice(this.waiters.indexOf(waiter), 1);
      const timer = setTimeout(() => {
        drop();
        this.child.off('exit', onExit);
        fail(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const onExit = () => {
        clearTimeout(timer);
        drop();
        fail(new Error(`child process exited while waiting for ${what}`));
      };
      this.child.once('exit', onExit);
      this.waiters.push(waiter);
    });
  }
}

type Pingable = Inbox<{ type: 'pong'; t: number; tc: number } | { type: string }, { cmd: 'ping'; t: number }>;

/** The child's clock minus ours, from the ping with the shortest round trip (corrected only when the round trip can tell it from zero). */
async function clockOffset(inbox: Pingable): Promise<{ offsetMs: number; rttMs: number; corrected: boolean }> {
  let best = { offsetMs: 0, rttMs: Infinity };
  for (let i = 0; i < 30; i++) {
    const t0 = now();
    inbox.send({ cmd: 'ping', t: t0 });
    const pong = (await inbox.wait('pong', 2000, 'a clock ping', (m) => (m as { t: number }).t === t0)) as unknown as { tc: number };
    const t1 = now();
    if (t1 - t0 < best.rttMs) best = { offsetMs: pong.tc - (t0 + t1) / 2, rttMs: t1 - t0 };
  }
  return { offsetMs: r3(best.offsetMs), rttMs: r3(best.rttMs), corrected: Math.abs(best.offsetMs) > best.rttMs / 2 };
}

async function spawn<In extends { type: string }, Out>(file: string): Promise<Inbox<In, Out>> {
  const child = fork(join(__dirname, file), [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise<void>((ok, fail) => {
    child.once('spawn', ok);
    child.once('error', fail);
  });
  return new Inbox<In, Out>(child);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((ok) => {
    const t = setTimeout(() => (child.kill('SIGKILL'), ok()), 3000);
    child.once('exit', () => (clearTimeout(t), ok()));
  });
}

/** Wraps the bus for the phase: stamps publish() of a terminal state and counts the subscriptions listening. */
function instrument(bus: JobEventBus, onPublish: (event: JobEvent) => void) {
  let listeners = 0;
  const originalPublish = bus.publish;
  const originalSubscribe = bus.subscribe;
  bus.publish = function (this: JobEventBus, event: JobEvent) {
    onPublish(event);
    return originalPublish.call(this, event);
  };
  bus.subscribe = function (this: JobEventBus, ...args: Parameters<JobEventBus['subscribe']>) {
    listeners++;
    const off = originalSubscribe.apply(this, args);
    let on = true;
    return () => {
      if (on) (on = false), listeners--;
      off();
    };
  };
  return {
    listeners: () => listeners,
    restore: () => {
      bus.publish = originalPublish;
      bus.subscribe = originalSubscribe;
    },
  };
}

interface PhaseContext {
  gateway: Gateway;
  gatewayUrl: string;
  log: (line: string) => void;
  simulatorVideoSeconds: number;
  jobCount: number;
  perProcess: number;
  client: ClientKind;
  gc?: () => void;
  prober: Inbox<ProberMessage, ProberCommand>;
  proberOffset: number;
  /** 1, 2, …: each round's sockets come from addresses of their own. */
  round: number;
}

async function runRound(ctx: PhaseContext, connections: number): Promise<FanoutRound> {
  const started = now();
  const log = (line: string) => ctx.log(`fan-out ${connections}: ${line}`);
  const { gateway, gatewayUrl } = ctx;
  const field = 'videoJobsUpdated';
  const query = `subscription { ${field} { ${JOB_FIELDS} } }`;
  const processes = Math.ceil(connections / ctx.perProcess);

  // One account per round: a live key for every subscriber, test keys (free, 5 video requests a minute each) to queue.
  const account = await gateway.accounts.findOrCreate({ issuer: 'urn:svc:bench', subject: `bench-fanout-${connections}-${Date.now()}` });
  const subscriberKey = (await gateway.keys.create(account.id, { name: 'fan-out subscribers', mode: 'live' })).secret;
  const queueKeys: string[] = [];
  for (let i = 0; i < Math.ceil((ctx.jobCount + 1) / RATE_LIMITS.video); i++) {
    queueKeys.push((await gateway.keys.create(account.id, { name: `fan-out queue ${i}`, mode: 'test' })).secret);
  }

  const published = new Map<string, number>();
  const seenOnBus = new Map<string, number>();
  const loop = monitorEventLoopDelay({ resolution: 1 });
  const bus = gateway.services.events;
  const probe = instrument(bus, ({ job }) => {
    if (job.status !== 'PROCESSING' && !published.has(job.id)) {
      published.set(job.id, now());
      loop.reset();
      loop.enable();
    }
  });
  const offBus = bus.subscribe(({ job }) => {
    if (job.status !== 'PROCESSING' && !seenOnBus.has(job.id)) seenOnBus.set(job.id, now());
  });
  const ownListeners = probe.listeners();
  const takeProbes = async (): Promise<Sample[]> => {
    ctx.prober.send({ cmd: 'take' });
    const m = (await ctx.prober.wait('samples', 5000, 'the /healthz probes')) as Extract<ProberMessage, { type: 'samples' }>;
    return m.samples.map(([t, ms, status]) => [t - ctx.proberOffset, ms, status]);
  };

  const children: Array<Inbox<ChildMessage, ParentMessage>> = [];
  const round: Partial<FanoutRound> = { connections, clientProcesses: processes };
  try {
    for (let i = 0; i < processes; i++) children.push(await spawn<ChildMessage, ParentMessage>('fanout-clients.js'));
    const clocks = await Promise.all(children.map((c) => clockOffset(c as unknown as Pingable)));
    round.clocks = clocks;
    const correction = clocks.map((c) => (c.corrected ? c.offsetMs : 0));
    log(`${processes} client process(es) ${children.map((c) => c.child.pid).join(', ')}; clock offsets ${clocks.map((c) => c.offsetMs).join(', ')} ms`);

    const baseline = await snapshot(ctx.gc);
    log(`baseline: rss ${baseline.rssMB} MB, heap ${baseline.heapUsedMB} MB`);

    const wsUrl = `${gatewayUrl.replace(/^http/, 'ws')}/graphql`;
    await takeProbes();
    loop.reset();
    loop.enable();
    const openStart = now();
    // The gateway runs with its default per-address cap: the sockets come from as many loopback
    // addresses as that needs (127.<round>.x.y; every 127/8 address is this machine on Linux).
    const cap = gateway.config.wsMaxConnectionsPerAddress;
    let nextAddress = 0;
    children.forEach((c, i) => {
      const count = Math.min(ctx.perProcess, connections - i * ctx.perProcess);
      const localAddresses =
        cap > 0 ? Array.from({ length: Math.ceil(count / cap) }, () => nextAddress++).map((k) => `127.${ctx.round}.${1 + Math.floor(k / 200)}.${10 + (k % 200)}`) : undefined;
      c.send({ cmd: 'open', url: wsUrl, tokens: [subscriberKey], count, concurrency: OPEN_CONCURRENCY, localAddresses, perAddress: cap, client: ctx.client });
    });
    round.sourceAddresses = cap > 0 ? nextAddress : 1;
    const opened = await Promise.all(children.map((c) => c.wait('opened', 300_000, 'the connections to open')));
    const openEnd = now();
    loop.disable();
    const connectStall = stallMs(loop);
    const connectProbes = probesIn(await takeProbes(), [[openStart, openEnd]]);
    const ok = opened.reduce((s, o) => s + o.ok, 0);
    const failed = opened.reduce((s, o) => s + o.failed, 0);
    const failures = opened.flatMap((o) => o.failures).slice(0, 5);
    const openSeconds = r3((openEnd - openStart) / 1000);
    round.open = { ok, failed, seconds: openSeconds, perSecond: Math.round(ok / Math.max(openSeconds, 0.001)), failures };
    log(
      `${ok} open and acknowledged in ${openSeconds} s (${round.open.perSecond}/s)${failed ? `, ${failed} FAILED (${failures.join('; ')})` : ''}; ` +
        `/healthz p99 ${connectProbes.p99} ms (max ${connectProbes.max}, ${connectProbes.count} probes); loop stall max ${connectStall} ms`,
    );
    if (ok === 0) throw new Error(`no connection opened: ${failures.join('; ')}`);

    const idle = await snapshot(ctx.gc);
    const perIdle = perItemKB(idle, baseline, ok);
    log(`idle: rss ${idle.rssMB} MB, heap ${idle.heapUsedMB} MB → per connection heap ${perIdle.heapUsed} KiB, rss ${perIdle.rss} KiB`);

    await takeProbes();
    loop.reset();
    loop.enable();
    const subscribeStart = now();
    children.forEach((c) => c.send({ cmd: 'subscribe', query, field }));
    await Promise.all(children.map((c) => c.wait('subscribed', 30_000, 'the subscribe messages to be sent')));
    const until = now() + 120_000;
    while (probe.listeners() - ownListeners < ok) {
      if (now() > until) throw new Error(`only ${probe.listeners() - ownListeners} of ${ok} subscriptions became active in 120 s`);
      await sleep(20);
    }
    const subscribeEnd = now();
    loop.disable();
    const subscribeStall = stallMs(loop);
    round.subscribeSeconds = r3((subscribeEnd - subscribeStart) / 1000);
    const subscribeProbes = probesIn(await takeProbes(), [[subscribeStart, subscribeEnd]]);
    log(`${ok} subscriptions active on the bus in ${round.subscribeSeconds} s; /healthz p99 ${subscribeProbes.p99} ms (max ${subscribeProbes.max}); loop stall max ${subscribeStall} ms`);
    const subscribed = await snapshot(ctx.gc);
    const perSub = perItemKB(subscribed, idle, ok);
    log(`subscribed: rss ${subscribed.rssMB} MB, heap ${subscribed.heapUsedMB} MB → per subscription heap ${perSub.heapUsed} KiB, rss ${perSub.rss} KiB`);
    round.memory = {
      baseline,
      idle,
      subscribed,
      perIdleConnectionKB: perIdle,
      perSubscriptionKB: perSub,
      clientProcessRssMB: r1(opened.reduce((s, o) => s + o.memory.rss, 0) / 1048576),
    };

    let queued = 0;
    const fanoutWindows: Array<[number, number]> = [];
    let fanoutStall = 0;
    const runJob = async (label: string, measured: boolean): Promise<{ job: FanoutJob; samples: number[] }> => {
      const key = queueKeys[Math.floor(queued++ / RATE_LIMITS.video)]!;
      const res = await fetch(`${gatewayUrl}/v1/video/queue`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: TEXT_MODEL, prompt: `fan-out ${label}`, resolution: '480p', duration: '5s' }),
      });
      const body = (await res.json()) as { id?: string };
      if (res.status !== 200 || !body.id) throw new Error(`queueing a video failed: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      const id = body.id;
      const reports = await Promise.all(
        children.map(async (c) => {
          try {
            return await c.wait('job', 30_000 + ctx.simulatorVideoSeconds * 1000, `job ${id} to reach every subscriber`, (m) => m.jobId === id);
          } catch (err) {
            if (!(err instanceof Error) || !/timed out/.test(err.message)) throw err;
            c.send({ cmd: 'collect', jobId: id });
            return c.wait('job', 5000, `what job ${id} reached`, (m) => m.jobId === id);
          }
        }),
      );
      loop.disable();
      const t0 = published.get(id);
      if (t0 === undefined) throw new Error(`job ${id} ended without a publish the bench saw`);
      const samples = reports.flatMap((m, i) => m.times.map((t) => t - correction[i]! - t0));
      const lat = latency(samples);
      const stall = stallMs(loop);
      if (measured) {
        fanoutWindows.push([t0, t0 + lat.max]);
        fanoutStall = Math.max(fanoutStall, stall);
      }
      const job: FanoutJob = {
        id,
        status: reports.map((m) => m.status).find((s) => s !== 'COMPLETED') ?? 'COMPLETED',
        received: samples.length,
        expected: reports.reduce((s, m) => s + m.expected, 0),
        publishToBusMs: r3((seenOnBus.get(id) ?? NaN) - t0),
        loopStallMs: stall,
        clientCpuMs: r3(reports.reduce((s, m) => s + m.clientCpuMs, 0)),
        latencyMs: lat,
      };
      log(
        `${label} ${id} ${job.status}: ${job.received}/${job.expected} subscribers, first ${lat.first} ms, p50 ${lat.p50} ms, p99 ${lat.p99} ms, last ${lat.max} ms ` +
          `(loop stall max ${stall} ms, client CPU ${job.clientCpuMs} ms)`,
      );
      return { job, samples };
    };

    await takeProbes();
    round.warmup = (await runJob('warm-up', false)).job;
    const jobs: FanoutJob[] = [];
    const pooled: number[] = [];
    await profiled(`fanout-${connections}`, async () => {
      for (let i = 0; i < ctx.jobCount; i++) {
        await sleep(200);
        const { job, samples } = await runJob(`job ${i + 1}/${ctx.jobCount}`, true);
        jobs.push(job);
        pooled.push(...samples);
      }
    });
    const fanoutProbes = probesIn(await takeProbes(), fanoutWindows);
    const overall = latency(pooled);
    round.overallMs = { ...overall, samples: pooled.length, meanLast: r3(jobs.reduce((s, j) => s + j.latencyMs.max, 0) / Math.max(jobs.length, 1)) };
    round.jobs = jobs;
    round.healthz = { connect: connectProbes, subscribe: subscribeProbes, fanout: fanoutProbes };
    round.loopStallMs = { connect: connectStall, fanout: fanoutStall };
    log(
      `all jobs (${pooled.length} deliveries): p50 ${overall.p50} ms, p99 ${overall.p99} ms, max ${overall.max} ms; ` +
        `/healthz during fan-out p99 ${fanoutProbes.p99} ms (max ${fanoutProbes.max}, ${fanoutProbes.count} probes); loop stall max ${fanoutStall} ms`,
    );
  } catch (err) {
    round.error = (err as Error).message;
    log(`FAILED: ${round.error}`);
  } finally {
    loop.disable();
    for (const c of children) {
      if (c.child.exitCode !== null || c.child.signalCode !== null) continue;
      c.send({ cmd: 'close' });
      await c.wait('closed', 30_000, 'the clients to close').catch(() => undefined);
    }
    await Promise.all(children.map((c) => stop(c.child)));
    offBus();
    probe.restore();
    // Let the gateway see every socket go before the next round measures its baseline.
    const until = now() + 30_000;
    while (probe.listeners() > 0 && now() < until) await sleep(50);
  }
  const zeroMem: MemorySnapshot = { rssMB: 0, heapUsedMB: 0, externalMB: 0, arrayBuffersMB: 0 };
  const zeroKB = { heapUsed: 0, external: 0, rss: 0 };
  const noProbes: Probes = { count: 0, p50: 0, p99: 0, max: 0, failed: 0 };
  const seconds = r1((now() - started) / 1000);
  log(`done in ${seconds} s`);
  return {
    connections,
    clientProcesses: processes,
    sourceAddresses: round.sourceAddresses ?? 0,
    open: round.open ?? { ok: 0, failed: 0, seconds: 0, perSecond: 0, failures: [] },
    subscribeSeconds: round.subscribeSeconds ?? 0,
    memory: round.memory ?? { baseline: zeroMem, idle: zeroMem, subscribed: zeroMem, perIdleConnectionKB: zeroKB, perSubscriptionKB: zeroKB, clientProcessRssMB: 0 },
    clocks: round.clocks ?? [],
    warmup: round.warmup ?? null,
    jobs: round.jobs ?? [],
    overallMs: round.overallMs ?? { first: 0, p50: 0, p99: 0, max: 0, samples: 0, meanLast: 0 },
    healthz: round.healthz ?? { connect: noProbes, subscribe: noProbes, fanout: noProbes },
    loopStallMs: round.loopStallMs ?? { connect: 0, fanout: 0 },
    seconds,
    ...(round.error ? { error: round.error } : {}),
  };
}

export async function runFanoutPhase(
  gateway: Gateway,
  gatewayUrl: string,
  opts: { log: (line: string) => void; simulatorVideoSeconds: number },
): Promise<FanoutResult> {
  const started = now();
  const sizes = positiveInts('BENCH_FANOUT_CONNECTIONS', [1000, 10_000]);
  const perProcess = positiveInt('BENCH_FANOUT_PER_PROCESS', 5000);
  const jobCount = Math.min(positiveInt('BENCH_FANOUT_JOBS', 5), (MAX_ACTIVE_KEYS - 1) * RATE_LIMITS.video - 1);
  const client = clientKind(process.env.BENCH_FANOUT_CLIENT);
  const eventBus = gateway.config.redisUrl ? 'redis' : 'in-process';
  const { gc, how } = findGc();
  opts.log(
    `fan-out: rounds of ${sizes.join(', ')} graphql-ws subscribers (${CLIENT_LABEL[client]}; videoJobsUpdated, ≤ ${perProcess} per client process), ${jobCount} jobs + 1 warm-up each, ` +
      `simulator ${opts.simulatorVideoSeconds} s, ${eventBus} event bus, GC: ${how}, /healthz every ${PROBE_EVERY_MS} ms`,
  );
  const prober = await spawn<ProberMessage, ProberCommand>('healthz-prober.js');
  const rounds: FanoutRound[] = [];
  let error: string | undefined;
  try {
    const clock = await clockOffset(prober as unknown as Pingable);
    prober.send({ cmd: 'start', url: `${gatewayUrl}/healthz`, everyMs: PROBE_EVERY_MS });
    const ctx = { gateway, gatewayUrl, log: opts.log, simulatorVideoSeconds: opts.simulatorVideoSeconds, jobCount, perProcess, client, gc, prober, proberOffset: clock.corrected ? clock.offsetMs : 0 };
    for (const [i, size] of sizes.entries()) {
      const round = await runRound({ ...ctx, round: i + 1 }, size);
      rounds.push(round);
      if (round.error) {
        error = `${size} subscribers: ${round.error}`;
        break;
      }
    }
  } catch (err) {
    error = (err as Error).message;
    opts.log(`fan-out: FAILED: ${error}`);
  } finally {
    prober.send({ cmd: 'close' });
    await stop(prober.child);
  }
  return {
    settings: {
      rounds: sizes,
      capPerAddress: gateway.config.wsMaxConnectionsPerAddress,
      jobs: jobCount,
      subscription: 'videoJobsUpdated',
      simulatorVideoSeconds: opts.simulatorVideoSeconds,
      perProcess,
      probeEveryMs: PROBE_EVERY_MS,
      batch: FANOUT_BATCH,
      clients: `${CLIENT_LABEL[client]}, in child processes`,
    },
    eventBus,
    gc: how,
    rounds,
    seconds: r1((now() - started) / 1000),
    ...(error ? { error } : {}),
  };
}

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
  const mdPath = join(resultsDir, `${name}.md`);
  const jsonPath = join(resultsDir, `${name}.json`);
  const md = existsSync(mdPath) ? readFileSync(mdPath, 'utf8') : '';
  const from = md.indexOf('\n## Subscription fan-out');
  // The sections after it (another phase's) stay where they are.
  const next = from >= 0 ? md.indexOf('\n## ', from + 1) : -1;
  const before = from >= 0 ? md.slice(0, from) : md;
  const after = next >= 0 ? md.slice(next) : '';
  const env = environment as { node?: string; cpu?: string; database?: string; redis?: boolean };
  const note =
    `Run on its own (\`BENCH_ONLY=fanout\`), ${at.toISOString().slice(0, 16).replace('T', ' ')} UTC: Node ${env.node}, ${env.cpu}, ` +
    `${env.database === 'postgresql' ? 'PostgreSQL' : 'embedded PGlite'}${env.redis ? ' + Redis' : ''}.`;
  writeFileSync(mdPath, before + renderFanoutMarkdown(fanout, note) + after);
  const json = existsSync(jsonPath) ? (JSON.parse(readFileSync(jsonPath, 'utf8')) as Record<string, unknown>) : {};
  writeFileSync(jsonPath, JSON.stringify({ ...json, fanout: { date: at.toISOString(), environment, ...fanout } }, null, 2) + '\n');
}
