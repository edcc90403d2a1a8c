/**
 * The subscription fan-out phase of `npm run bench`: BENCH_FANOUT_CONNECTIONS (default 1,000)
 * graphql-ws subscribers on the one gateway the bench runs, and how fast a job's completion
 * reaches each of them.
 *
 * The clients live in a child process (bench/fanout-clients.ts): their sockets share neither the
 * gateway's event loop (the latency would be the clients' own queueing) nor its process (the
 * gateway's RSS is one of the figures). All connect with one live API key of one account, each
 * subscribes to `videoJobsUpdated`, and BENCH_FANOUT_JOBS (default 5) video jobs are queued one at
 * a time with test keys of the same account (free, served by the simulator).
 *
 * Measured:
 *  - memory per idle connection: the gateway's heap / external / RSS after forced GC, before and
 *    after the connections are open and acknowledged (connection_init checked the key), then again
 *    with one subscription on each;
 *  - fan-out latency: from the moment the job's COMPLETED event is published (JobFinisher calls
 *    bus.publish right after the commit; the bench wraps that method on the bus instance to stamp
 *    it) to the moment each client's graphql-ws `next` callback runs, in the child. Both sides use
 *    performance.timeOrigin + performance.now(); the offset between the two processes' clocks is
 *    estimated over IPC and reported.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Gateway } from '../src/gateway';
import type { JobEvent } from '../src/domain/events/job-events';
import { RATE_LIMITS } from '../src/domain/ratelimit/rate-limiter';
import { MAX_ACTIVE_KEYS } from '../src/domain/keys/key-service';
import { percentile } from './phase';
import type { ChildMessage, ParentMessage } from './fanout-clients';

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

export interface FanoutJob {
  id: string;
  status: string;
  /** Subscribers that received the terminal event / subscriptions running. */
  received: number;
  expected: number;
  /** publish() called → the bench's own bus listener ran (the Redis round trip, with Redis). */
  publishToBusMs: number;
  /**
   * publish() called → the gateway's event loop next ran a macrotask: every subscriber's stream was
   * woken, its result executed and written to its socket in between (all of it is microtasks).
   */
  gatewayBusyMs: number;
  /** CPU the client process spent between its first and last receipt. */
  clientCpuMs: number;
  latencyMs: FanoutLatency;
}

export interface FanoutResult {
  settings: {
    connections: number;
    jobs: number;
    subscription: string;
    simulatorVideoSeconds: number;
    subscriberKeys: number;
    queueKeys: number;
    clients: string;
  };
  eventBus: 'in-process' | 'redis';
  gc: 'global.gc (--expose-gc)' | 'v8 flag at run time' | 'none';
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
  clock: { offsetMs: number; rttMs: number; corrected: boolean };
  warmup: FanoutJob | null;
  jobs: FanoutJob[];
  /** Every subscriber of every measured job, pooled. */
  overallMs: FanoutLatency & { samples: number; meanLast: number };
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

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const r1 = (n: number) => Math.round(n * 10) / 10;
const r3 = (n: number) => Math.round(n * 1000) / 1000;
const TEXT_MODEL = 'svc-2.5-preview-text-to-video';
const JOB_FIELDS = 'id status url reason creditsCharged creditsUsed updatedAt';

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

/** The child's IPC messages, kept until a waiter takes them (a job may finish before anyone waits). */
class Inbox {
  private readonly messages: ChildMessage[] = [];
  private readonly waiters: Array<{ match: (m: ChildMessage) => boolean; ok: (m: ChildMessage) => void }> = [];
  private exit: string | null = null;

  constructor(private readonly child: ChildProcess) {
    child.on('message', (m: ChildMessage) => {
      const i = this.waiters.findIndex((w) => w.match(m));
      if (i >= 0) this.waiters.splice(i, 1)[0]!.ok(m);
      else this.messages.push(m);
    });
    child.once('exit', (code, signal) => {
      this.exit = `client process exited (code ${code}, signal ${signal})`;
    });
  }

  send(m: ParentMessage): void {
    this.child.send(m);
  }

  wait<T extends ChildMessage['type']>(type: T, timeoutMs: number, what: string, match: (m: Extract<ChildMessage, { type: T }>) => boolean = () => true): Promise<Extract<ChildMessage, { type: T }>> {
    const fits = (m: ChildMessage): m is Extract<ChildMessage, { type: T }> =>
      m.type === 'fatal' || (m.type === type && match(m as Extract<ChildMessage, { type: T }>));
    const unwrap = (m: ChildMessage) => {
      if (m.type === 'fatal') throw new Error(`client process: ${m.error}`);
      return m as Extract<ChildMessage, { type: T }>;
    };
    const queued = this.messages.findIndex(fits);
    if (queued >= 0) return Promise.resolve().then(() => unwrap(this.messages.splice(queued, 1)[0]!));
    if (this.exit) return Promise.reject(new Error(`${this.exit} while waiting for ${what}`));
    return new Promise((ok, fail) => {
      const waiter = {
        match: fits,
        ok: (m: ChildMessage) => {
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
        fail(new Error(`client process exited while waiting for ${what}`));
      };
      this.child.once('exit', onExit);
      this.waiters.push(waiter);
    });
  }
}

/** The child's clock minus ours, from the ping with the shortest round trip. */
async function clockOffset(inbox: Inbox): Promise<{ offsetMs: number; rttMs: number }> {
  let best = { offsetMs: 0, rttMs: Infinity };
  for (let i = 0; i < 30; i++) {
    const t0 = now();
    inbox.send({ cmd: 'ping', t: t0 });
    const pong = await inbox.wait('pong', 2000, 'a clock ping', (m) => m.t === t0);
    const t1 = now();
    if (t1 - t0 < best.rttMs) best = { offsetMs: pong.tc - (t0 + t1) / 2, rttMs: t1 - t0 };
  }
  return { offsetMs: r3(best.offsetMs), rttMs: r3(best.rttMs) };
}

export async function runFanoutPhase(
  gateway: Gateway,
  gatewayUrl: string,
  opts: { log: (line: string) => void; simulatorVideoSeconds: number },
): Promise<FanoutResult> {
  const started = now();
  const log = (line: string) => opts.log(`fan-out: ${line}`);
  const connections = positiveInt('BENCH_FANOUT_CONNECTIONS', 1000);
  const jobCount = Math.min(positiveInt('BENCH_FANOUT_JOBS', 5), (MAX_ACTIVE_KEYS - 1) * RATE_LIMITS.video - 1);
  const field = 'videoJobsUpdated';
  const query = `subscription { ${field} { ${JOB_FIELDS} } }`;
  const bus = gateway.services.events;
  const eventBus = gateway.config.redisUrl ? 'redis' : 'in-process';
  const { gc, how } = findGc();
  log(`${connections} graphql-ws subscribers (${field}), ${jobCount} jobs + 1 warm-up, simulator ${opts.simulatorVideoSeconds} s, ${eventBus} event bus, GC: ${how}`);

  // One account: a live key for every subscriber, test keys (free, 5 video requests a minute each) to queue.
  const account = await gateway.accounts.findOrCreate({ issuer: 'urn:svc:bench', subject: 'bench-fanout' });
  const subscriberKey = (await gateway.keys.create(account.id, { name: 'fan-out subscribers', mode: 'live' })).secret;
  const queueKeys: string[] = [];
  for (let i = 0; i < Math.ceil((jobCount + 1) / RATE_LIMITS.video); i++) {
    queueKeys.push((await gateway.keys.create(account.id, { name: `fan-out queue ${i}`, mode: 'test' })).secret);
  }

  // Stamp publish() (called right after the commit) and count bus listeners (one per running subscription).
  const published = new Map<string, number>();
  const seenOnBus = new Map<string, number>();
  const loopFree = new Map<string, number>();
  let listeners = 0;
  const originalPublish = bus.publish;
  const originalSubscribe = bus.subscribe;
  bus.publish = function (this: typeof bus, event: JobEvent) {
    if (event.job.status !== 'PROCESSING' && !published.has(event.job.id)) published.set(event.job.id, now());
    return originalPublish.call(this, event);
  };
  bus.subscribe = function (this: typeof bus, listener: (event: JobEvent) => void) {
    listeners++;
    const off = originalSubscribe.call(this, listener);
    let on = true;
    return () => {
      if (on) (on = false), listeners--;
      off();
    };
  };
  // Subscribed before any client: on the in-process bus it runs first of all listeners.
  const offBus = bus.subscribe(({ job }) => {
    if (job.status !== 'PROCESSING' && !seenOnBus.has(job.id)) {
      seenOnBus.set(job.id, now());
      // Runs once the listeners called after this one, and the microtasks they started, are done.
      setImmediate(() => loopFree.set(job.id, now()));
    }
  });
  const ownListeners = listeners;

  const child = fork(join(__dirname, 'fanout-clients.js'), [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const inbox = new Inbox(child);
  const result: Partial<FanoutResult> = { eventBus, gc: how };
  try {
    await new Promise<void>((ok, fail) => {
      child.once('spawn', ok);
      child.once('error', fail);
    });
    const clock = await clockOffset(inbox);
    // Only correct for an offset the round trip can tell from zero.
    const corrected = Math.abs(clock.offsetMs) > clock.rttMs / 2;
    const correction = corrected ? clock.offsetMs : 0;
    log(`client process ${child.pid}; clock offset ${clock.offsetMs} ms (IPC round trip ${clock.rttMs} ms)${corrected ? ', corrected' : ', not corrected'}`);

    const baseline = await snapshot(gc);
    log(`baseline: rss ${baseline.rssMB} MB, heap ${baseline.heapUsedMB} MB, external ${baseline.externalMB} MB`);

    const wsUrl = `${gatewayUrl.replace(/^http/, 'ws')}/graphql`;
    log(`opening ${connections} authenticated connections (64 in flight)…`);
    inbox.send({ cmd: 'open', url: wsUrl, tokens: [subscriberKey], count: connections, concurrency: 64 });
    const opened = await inbox.wait('opened', 60_000, 'the connections to open');
    const openSeconds = r3(opened.ms / 1000);
    result.open = { ok: opened.ok, failed: opened.failed, seconds: openSeconds, perSecond: Math.round(opened.ok / Math.max(openSeconds, 0.001)), failures: opened.failures };
    log(`${opened.ok} open and acknowledged in ${openSeconds} s${opened.failed ? `, ${opened.failed} FAILED (${opened.failures.join('; ')})` : ''}`);
    if (opened.ok === 0) throw new Error(`no connection opened: ${opened.failures.join('; ')}`);

    const idle = await snapshot(gc);
    const perIdle = perItemKB(idle, baseline, opened.ok);
    log(`idle: rss ${idle.rssMB} MB, heap ${idle.heapUsedMB} MB, external ${idle.externalMB} MB → per connection heap ${perIdle.heapUsed} KiB, rss ${perIdle.rss} KiB`);

    const subscribeStart = now();
    inbox.send({ cmd: 'subscribe', query, field });
    await inbox.wait('subscribed', 10_000, 'the subscribe messages to be sent');
    const until = now() + 30_000;
    while (listeners - ownListeners < opened.ok) {
      if (now() > until) throw new Error(`only ${listeners - ownListeners} of ${opened.ok} subscriptions became active in 30 s`);
      await sleep(20);
    }
    result.subscribeSeconds = r3((now() - subscribeStart) / 1000);
    log(`${opened.ok} subscriptions active on the bus in ${result.subscribeSeconds} s`);
    const subscribed = await snapshot(gc);
    const perSub = perItemKB(subscribed, idle, opened.ok);
    log(`subscribed: rss ${subscribed.rssMB} MB, heap ${subscribed.heapUsedMB} MB → per subscription heap ${perSub.heapUsed} KiB, rss ${perSub.rss} KiB`);
    result.memory = { baseline, idle, subscribed, perIdleConnectionKB: perIdle, perSubscriptionKB: perSub, clientProcessRssMB: r1(opened.memory.rss / 1048576) };
    result.clock = { ...clock, corrected };

    let queued = 0;
    const runJob = async (label: string): Promise<{ job: FanoutJob; samples: number[] }> => {
      const key = queueKeys[Math.floor(queued++ / RATE_LIMITS.video)]!;
      const res = await fetch(`${gatewayUrl}/v1/video/queue`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: TEXT_MODEL, prompt: `fan-out ${label}`, resolution: '480p', duration: '5s' }),
      });
      const body = (await res.json()) as { id?: string };
      if (res.status !== 200 || !body.id) throw new Error(`queueing a video failed: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      const id = body.id;
      let msg: Extract<ChildMessage, { type: 'job' }>;
      try {
        msg = await inbox.wait('job', 15_000 + opts.simulatorVideoSeconds * 1000, `job ${id} to reach every subscriber`, (m) => m.jobId === id);
      } catch (err) {
        if (!(err instanceof Error) || !/timed out/.test(err.message)) throw err;
        inbox.send({ cmd: 'collect', jobId: id });
        msg = await inbox.wait('job', 5000, `what job ${id} reached`, (m) => m.jobId === id);
      }
      const t0 = published.get(id);
      if (t0 === undefined) throw new Error(`job ${id} ended without a publish the bench saw`);
      const samples = msg.times.map((t) => t - correction - t0);
      const lat = latency(samples);
      const job: FanoutJob = { id, status: msg.status, received: msg.times.length, expected: msg.expected, publishToBusMs: r3((seenOnBus.get(id) ?? NaN) - t0), gatewayBusyMs: r3((loopFree.get(id) ?? NaN) - t0), clientCpuMs: r3(msg.clientCpuMs), latencyMs: lat };
      log(
        `${label} ${id} ${msg.status}: ${job.received}/${job.expected} subscribers, first ${lat.first} ms, p50 ${lat.p50} ms, p99 ${lat.p99} ms, last ${lat.max} ms ` +
          `(gateway loop busy ${job.gatewayBusyMs} ms, client CPU ${job.clientCpuMs} ms)`,
      );
      return { job, samples };
    };

    result.warmup = (await runJob('warm-up')).job;
    const jobs: FanoutJob[] = [];
    const pooled: number[] = [];
    for (let i = 0; i < jobCount; i++) {
      await sleep(200);
      const { job, samples } = await runJob(`job ${i + 1}/${jobCount}`);
      jobs.push(job);
      pooled.push(...samples);
    }
    const overall = latency(pooled);
    result.overallMs = { ...overall, samples: pooled.length, meanLast: r3(jobs.reduce((s, j) => s + j.latencyMs.max, 0) / Math.max(jobs.length, 1)) };
    result.jobs = jobs;
    log(`all jobs (${pooled.length} deliveries): p50 ${overall.p50} ms, p99 ${overall.p99} ms, max ${overall.max} ms; last subscriber on average ${result.overallMs.meanLast} ms`);
  } catch (err) {
    result.error = (err as Error).message;
    log(`FAILED: ${result.error}`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      inbox.send({ cmd: 'close' });
      await inbox.wait('closed', 10_000, 'the clients to close').catch(() => undefined);
      await new Promise<void>((ok) => {
        if (child.exitCode !== null || child.signalCode !== null) return ok();
        const t = setTimeout(() => (child.kill('SIGKILL'), ok()), 3000);
        child.once('exit', () => (clearTimeout(t), ok()));
      });
    }
    offBus();
    bus.publish = originalPublish;
    bus.subscribe = originalSubscribe;
  }
  const empty: FanoutLatency = { first: 0, p50: 0, p99: 0, max: 0 };
  const zeroMem: MemorySnapshot = { rssMB: 0, heapUsedMB: 0, externalMB: 0, arrayBuffersMB: 0 };
  const zeroKB = { heapUsed: 0, external: 0, rss: 0 };
  const seconds = r1((now() - started) / 1000);
  log(`done in ${seconds} s`);
  return {
    settings: {
      connections,
      jobs: jobCount,
      subscription: field,
      simulatorVideoSeconds: opts.simulatorVideoSeconds,
      subscriberKeys: 1,
      queueKeys: queueKeys.length,
      clients: 'graphql-ws createClient over ws, in one child process',
    },
    eventBus,
    gc: how,
    open: result.open ?? { ok: 0, failed: 0, seconds: 0, perSecond: 0, failures: [] },
    subscribeSeconds: result.subscribeSeconds ?? 0,
    memory: result.memory ?? { baseline: zeroMem, idle: zeroMem, subscribed: zeroMem, perIdleConnectionKB: zeroKB, perSubscriptionKB: zeroKB, clientProcessRssMB: 0 },
    clock: result.clock ?? { offsetMs: 0, rttMs: 0, corrected: false },
    warmup: result.warmup ?? null,
    jobs: result.jobs ?? [],
    overallMs: result.overallMs ?? { ...empty, samples: 0, meanLast: 0 },
    seconds,
    ...(result.error ? { error: result.error } : {}),
  };
}

const ms = (n: number) => n.toFixed(2);

export function renderFanoutMarkdown(f: FanoutResult): string {
  const s = f.settings;
  const m = f.memory;
  const memRow = (label: string, x: MemorySnapshot) => `| ${label} | ${x.rssMB.toFixed(1)} | ${x.heapUsedMB.toFixed(1)} | ${x.externalMB.toFixed(1)} |`;
  const jobRow = (label: string, j: FanoutJob) =>
    `| ${label} | ${j.status} | ${j.received}/${j.expected} | ${ms(j.publishToBusMs)} | ${ms(j.latencyMs.first)} | ${ms(j.latencyMs.p50)} | ${ms(j.latencyMs.p99)} | ${ms(j.latencyMs.max)} | ` +
    `${ms(j.gatewayBusyMs)} | ${ms(j.clientCpuMs)} |`;
  const lines = [
    '',
    '## Subscription fan-out',
    '',
    `${s.connections} graphql-ws clients (\`createClient\` over \`ws\`) in a child process, so their sockets share neither the gateway's`,
    `event loop nor its memory figures; all authenticate with one live API key of one account (\`connectionParams.authorization\`)`,
    `and each holds one \`${s.subscription}\` subscription. ${s.jobs} video jobs (after one warm-up job) are queued one at a time with`,
    `test keys of that account and finished by the simulator (SIMULATOR_VIDEO_SECONDS=${s.simulatorVideoSeconds}). Event path: ${f.eventBus === 'redis' ? 'Redis pub/sub' : 'the in-process event bus'}.`,
    '',
  ];
  if (f.error) lines.push(`**The phase failed:** ${f.error}`, '');
  lines.push(
    `### Memory of the gateway process, after forced GC (${f.gc})`,
    '',
    '| state | RSS MB | heap used MB | external MB |',
    '|---|---:|---:|---:|',
    memRow('baseline', m.baseline),
    memRow(`${f.open.ok} idle authenticated connections`, m.idle),
    memRow(`+ one subscription on each`, m.subscribed),
    '',
    `Per idle connection: **${m.perIdleConnectionKB.heapUsed} KiB heap**, ${m.perIdleConnectionKB.external} KiB external, ${m.perIdleConnectionKB.rss} KiB RSS. ` +
      `Per subscription on top: ${m.perSubscriptionKB.heapUsed} KiB heap, ${m.perSubscriptionKB.external} KiB external, ${m.perSubscriptionKB.rss} KiB RSS. ` +
      `(RSS moves in pages and keeps what the allocator has not returned; heap used is the steadier figure.)`,
    `Opening took ${f.open.seconds} s (${f.open.perSecond} connections/s, 64 in flight, each checked by connection_init)` +
      `${f.open.failed ? `; **${f.open.failed} failed**: ${f.open.failures.join('; ')}` : ''}; the ${f.open.ok} subscriptions were all active ` +
      `on the bus ${f.subscribeSeconds} s after they were sent. The client process used ${m.clientProcessRssMB} MB RSS.`,
    '',
    '### Job completion → each subscriber',
    '',
    'From JobFinisher\'s publish (right after the commit that made the job COMPLETED) to the client\'s `next` callback, in',
    `milliseconds, over the subscribers; "last" is when the last one had it. "bus" is publish → the bench's own listener on the`,
    `bus (${f.eventBus === 'redis' ? 'the Redis round trip' : 'in-process: immediate'}). Clock offset between the processes ${f.clock.offsetMs} ms ` +
      `(IPC round trip ${f.clock.rttMs} ms; ${f.clock.corrected ? 'corrected' : 'within the round trip, not corrected'}). "gateway busy" is publish → the`,
    `gateway's event loop next ran a macrotask: waking every stream, executing its result and writing it to the socket all`,
    `happen in between, as microtasks. "client CPU" is what the client process spent from its first receipt to its last.`,
    '',
    '| job | status | subscribers | bus ms | first ms | p50 ms | p99 ms | last ms | gateway busy ms | client CPU ms |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...(f.warmup ? [jobRow('warm-up (not pooled)', f.warmup)] : []),
    ...f.jobs.map((j, i) => jobRow(String(i + 1), j)),
    `| **all ${f.jobs.length} jobs** | | ${f.overallMs.samples} deliveries | | ${ms(f.overallMs.first)} | **${ms(f.overallMs.p50)}** | **${ms(f.overallMs.p99)}** | **${ms(f.overallMs.max)}** | | |`,
    '',
    `Time to the last subscriber, mean over the jobs: **${ms(f.overallMs.meanLast)} ms**. Phase time ${f.seconds} s ` +
      `(BENCH_FANOUT_CONNECTIONS, BENCH_FANOUT_JOBS; SIMULATOR_VIDEO_SECONDS is passed through, default 0.5 here).`,
    '',
  );
  return lines.join('\n');
}
