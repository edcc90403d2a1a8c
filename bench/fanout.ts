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
 *
 * This file reads the settings, runs the prober and the rounds and gathers the result; a round is
 * bench/fanout-round.ts, the child processes bench/fanout-children.ts, the measurements
 * bench/fanout-measures.ts, the result's shape bench/fanout-types.ts and its Markdown
 * bench/fanout-report.ts.
 */
import type { Gateway } from '../src/gateway';
import { RATE_LIMITS } from '../src/domain/ratelimit/rate-limiter';
import { MAX_ACTIVE_KEYS } from '../src/domain/keys/key-service';
import { FANOUT_BATCH } from '../src/infra/events/local-event-bus';
import { clientKind, type ClientKind } from './fanout-connections';
import type { ProberCommand, ProberMessage } from './healthz-prober';
import { clockOffset, spawn, stop, type Pingable } from './fanout-children';
import { findGc } from './fanout-measures';
import { runRound } from './fanout-round';
import { now, r1, type FanoutResult, type FanoutRound } from './fanout-types';

export type { FanoutResult } from './fanout-types';
export { renderFanoutMarkdown, writeFanoutOnly } from './fanout-report';

const CLIENT_LABEL: Record<ClientKind, string> = {
  wire: 'a frame reader on raw sockets (bench/graphql-ws-wire.ts)',
  'graphql-ws': 'graphql-ws createClient over ws',
};

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

/**
 * /healthz answers after a `select 1`: on the embedded database that query waits its turn on the
 * one connection, so probing much faster than every few milliseconds measures the bench's own
 * queue of probes rather than the gateway.
 */
const PROBE_EVERY_MS = positiveInt('BENCH_FANOUT_PROBE_MS', 10);

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
    const ctx = {
      gateway,
      gatewayUrl,
      log: opts.log,
      simulatorVideoSeconds: opts.simulatorVideoSeconds,
      jobCount,
      perProcess,
      client,
      gc,
      prober,
      proberOffset: clock.corrected ? clock.offsetMs : 0,
    };
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
