/**
 * Child-process entry for the subscription fan-out phase (bench/fanout.ts): holds every
 * subscriber connection (bench/fanout-connections.ts: the wire reader by default, or graphql-ws's
 * client), so the client sockets share neither the gateway's event loop nor its process (the
 * gateway's RSS is measured, and a worker thread's memory would count in it).
 *
 * Speaks to the parent over the IPC channel:
 *   open      → opens `count` authenticated connections (lazy: false, so connection_init is sent
 *               and acknowledged without any operation), at most `concurrency` in flight
 *   subscribe → one subscription per connection; every result is timestamped on arrival
 *   ping      → answers this process's clock, for the parent to estimate the offset
 *   collect   → the receive times of one job's terminal event, as far as they have arrived
 *   close     → disposes every client and exits
 * and posts `job` on its own once every subscriber has seen a job's terminal event.
 * Times are performance.timeOrigin + performance.now() (Unix milliseconds, sub-millisecond).
 */
import { performance } from 'node:perf_hooks';
import { clientKind, openConnection, type SubscriberConnection } from './fanout-connections';

export type ParentMessage =
  | {
      cmd: 'open';
      url: string;
      tokens: string[];
      count: number;
      concurrency: number;
      /** Source addresses (127.x.y.z: all loopback on Linux), `perAddress` sockets from each, so a per-address cap holds; none: the system's choice. */
      localAddresses?: string[];
      perAddress?: number;
      /** Which client speaks the protocol (BENCH_FANOUT_CLIENT). */
      client?: string;
    }
  | { cmd: 'subscribe'; query: string; field: string }
  | { cmd: 'ping'; t: number }
  | { cmd: 'collect'; jobId: string }
  | { cmd: 'close' };

export type ChildMessage =
  | { type: 'opened'; ok: number; failed: number; failures: string[]; ms: number; memory: NodeJS.MemoryUsage }
  | { type: 'subscribed'; sent: number }
  | { type: 'pong'; t: number; tc: number }
  | {
      type: 'job';
      jobId: string;
      status: string;
      times: number[];
      expected: number;
      complete: boolean;
      /** CPU this process spent from the first receipt to the last, ms (≈ the window: the clients were the bottleneck). */
      clientCpuMs: number;
    }
  | { type: 'closed' }
  | { type: 'fatal'; error: string };

const now = () => performance.timeOrigin + performance.now();
const send = (m: ChildMessage) => process.send!(m);

const connections: SubscriberConnection[] = [];
/** Subscriptions still running; a job is reported once this many have seen its terminal event. */
let live = 0;
let subscriptionErrors = 0;
/** jobId → receive times of its terminal event (COMPLETED or FAILED), one per subscriber. */
const terminal = new Map<string, { status: string; times: number[]; reported: boolean; cpu: NodeJS.CpuUsage; cpuMs: number }>();

async function open(m: Extract<ParentMessage, { cmd: 'open' }>): Promise<void> {
  const kind = clientKind(m.client);
  const started = now();
  let next = 0;
  let failed = 0;
  const failures: string[] = [];
  const lane = async () => {
    while (next < m.count) {
      const i = next++;
      try {
        const local = m.localAddresses?.[Math.floor(i / (m.perAddress ?? Infinity))];
        connections.push(await openConnection(kind, m.url, m.tokens[i % m.tokens.length], now, local));
      } catch (err) {
        failed++;
        if (failures.length < 5) failures.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(m.concurrency, m.count) }, lane));
  send({ type: 'opened', ok: connections.length, failed, failures, ms: now() - started, memory: process.memoryUsage() });
}

/** CPU from a job's first receipt to now, ms (read at its last receipt, or when asked for it). */
function cpuSince(entry: { cpu: NodeJS.CpuUsage }): number {
  const cpu = process.cpuUsage(entry.cpu);
  return (cpu.user + cpu.system) / 1000;
}

function report(jobId: string, complete: boolean): void {
  const entry = terminal.get(jobId);
  if (entry && !entry.reported) entry.cpuMs = cpuSince(entry);
  send({ type: 'job', jobId, status: entry?.status ?? 'none', times: entry?.times ?? [], expected: live, complete, clientCpuMs: entry?.cpuMs ?? 0 });
}

function subscribe(m: Extract<ParentMessage, { cmd: 'subscribe' }>): void {
  for (const connection of connections) {
    live++;
    connection.subscribe(m.query, {
      next: (data, receivedAt) => {
        const job = data?.[m.field] as { id: string; status: string } | undefined;
        if (!job) {
          subscriptionErrors++;
          return;
        }
        if (job.status !== 'COMPLETED' && job.status !== 'FAILED') return;
        let entry = terminal.get(job.id);
        if (!entry) terminal.set(job.id, (entry = { status: job.status, times: [], reported: false, cpu: process.cpuUsage(), cpuMs: 0 }));
        entry.times.push(receivedAt);
        if (!entry.reported && entry.times.length >= live) {
          entry.cpuMs = cpuSince(entry);
          entry.reported = true;
          report(job.id, true);
        }
      },
      error: () => {
        subscriptionErrors++;
        live--;
      },
      complete: () => {
        live--;
      },
    });
  }
  send({ type: 'subscribed', sent: connections.length });
}

process.on('message', (m: ParentMessage) => {
  switch (m.cmd) {
    case 'open':
      void open(m).catch((err: unknown) => send({ type: 'fatal', error: String((err as Error)?.stack ?? err) }));
      return;
    case 'subscribe':
      subscribe(m);
      return;
    case 'ping':
      send({ type: 'pong', t: m.t, tc: now() });
      return;
    case 'collect':
      report(m.jobId, (terminal.get(m.jobId)?.times.length ?? 0) >= live);
      return;
    case 'close':
      void Promise.allSettled(connections.map((c) => c.dispose())).then(() => {
        send({ type: 'closed' });
        setTimeout(() => process.exit(subscriptionErrors > 0 ? 2 : 0), 50);
      });
      return;
  }
});
