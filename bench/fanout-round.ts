/**
 * One round of the fan-out phase (bench/fanout.ts describes what it measures): a fresh account,
 * its subscribers opened and subscribed from client processes, then a warm-up job and the
 * measured jobs fanned out to them, with /healthz probed and the gateway's memory and event loop
 * watched throughout.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Gateway } from '../src/gateway';
import { RATE_LIMITS } from '../src/domain/ratelimit/rate-limiter';
import { stallMs } from './phase';
import { profiled } from './profiler';
import type { ChildMessage, ParentMessage } from './fanout-clients';
import type { ClientKind } from './fanout-connections';
import type { ProberCommand, ProberMessage } from './healthz-prober';
import { clockOffset, spawn, stop, type Inbox, type Pingable } from './fanout-children';
import { instrument, latency, perItemKB, probesIn, snapshot, type Sample } from './fanout-measures';
import { now, OPEN_CONCURRENCY, r1, r3, sleep, type FanoutJob, type FanoutRound, type MemorySnapshot, type Probes } from './fanout-types';

const TEXT_MODEL = 'svc-2.5-preview-text-to-video';
const JOB_FIELDS = 'id status url reason creditsCharged creditsUsed updatedAt';

export interface PhaseContext {
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

export async function runRound(ctx: PhaseContext, connections: number): Promise<FanoutRound> {
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
        cap > 0
          ? Array.from({ length: Math.ceil(count / cap) }, () => nextAddress++).map((k) => `127.${ctx.round}.${1 + Math.floor(k / 200)}.${10 + (k % 200)}`)
          : undefined;
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
    log(
      `${ok} subscriptions active on the bus in ${round.subscribeSeconds} s; /healthz p99 ${subscribeProbes.p99} ms (max ${subscribeProbes.max}); loop stall max ${subscribeStall} ms`,
    );
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
      const key = queueKeys[Math.floor(queued++ / RATE_LIMITS.video)];
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
      const samples = reports.flatMap((m, i) => m.times.map((t) => t - correction[i] - t0));
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
    memory: round.memory ?? {
      baseline: zeroMem,
      idle: zeroMem,
      subscribed: zeroMem,
      perIdleConnectionKB: zeroKB,
      perSubscriptionKB: zeroKB,
      clientProcessRssMB: 0,
    },
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
