/**
 * Child-process entry for the subscription fan-out phase (bench/fanout.ts): holds every
 * graphql-ws client, so 1,000 client sockets share neither the gateway's event loop nor its
 * process (the gateway's RSS is measured, and a worker thread's memory would count in it).
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
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';

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

const clients: Client[] = [];
/** Subscriptions still running; a job is reported once this many have seen its terminal event. */
let live = 0;
let subscriptionErrors = 0;
/** jobId → receive times of its terminal event (COMPLETED or FAILED), one per subscriber. */
const terminal = new Map<string, { status: string; times: number[]; reported: boolean; cpu: NodeJS.CpuUsage; cpuMs: number }>();

/** A ws WebSocket bound to one local address (graphql-ws constructs it with url and protocol only). */
function boundTo(localAddress: string | undefined): unknown {
  if (!localAddress) return WebSocket;
  return class extends WebSocket {
    constructor(address: string | URL, protocols?: string | string[]) {
      super(address, protocols, { localAddress });
    }
  };
}

function connectOne(url: string, token: string, localAddress?: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const client = createClient({
      url,
      webSocketImpl: boundTo(localAddress),
      lazy: false,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${token}` },
      on: {
        connected: () => {
          if (!settled) (settled = true), resolve(client);
        },
        closed: (e) => {
          const ev = e as { code?: number; reason?: string };
          if (!settled) (settled = true), reject(new Error(`closed ${ev.code ?? '?'} ${ev.reason ?? ''}`.trim()));
        },
        error: (e) => {
          if (!settled) (settled = true), reject(e instanceof Error ? e : new Error(String((e as { message?: string })?.message ?? e)));
        },
      },
      // Without an operation a non-lazy client would be closed by nothing; errors are reported above.
      onNonLazyError: () => undefined,
    });
  });
}

async function open(m: Extract<ParentMessage, { cmd: 'open' }>): Promise<void> {
  const started = now();
  let next = 0;
  let failed = 0;
  const failures: string[] = [];
  const lane = async () => {
    while (next < m.count) {
      const i = next++;
      try {
        const local = m.localAddresses?.[Math.floor(i / (m.perAddress ?? Infinity))];
        clients.push(await connectOne(m.url, m.tokens[i % m.tokens.length]!, local));
      } catch (err) {
        failed++;
        if (failures.length < 5) failures.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(m.concurrency, m.count) }, lane));
  send({ type: 'opened', ok: clients.length, failed, failures, ms: now() - started, memory: process.memoryUsage() });
}

function report(jobId: string, complete: boolean): void {
  const entry = terminal.get(jobId);
  send({ type: 'job', jobId, status: entry?.status ?? 'none', times: entry?.times ?? [], expected: live, complete, clientCpuMs: entry?.cpuMs ?? 0 });
}

function subscribe(m: Extract<ParentMessage, { cmd: 'subscribe' }>): void {
  for (const client of clients) {
    live++;
    client.subscribe<Record<string, { id: string; status: string }>>(
      { query: m.query },
      {
        next: (result) => {
          const t = now();
          const job = result.data?.[m.field];
          if (!job) {
            subscriptionErrors++;
            return;
          }
          if (job.status !== 'COMPLETED' && job.status !== 'FAILED') return;
          let entry = terminal.get(job.id);
          if (!entry) terminal.set(job.id, (entry = { status: job.status, times: [], reported: false, cpu: process.cpuUsage(), cpuMs: 0 }));
          entry.times.push(t);
          const cpu = process.cpuUsage(entry.cpu);
          entry.cpuMs = (cpu.user + cpu.system) / 1000;
          if (!entry.reported && entry.times.length >= live) {
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
      },
    );
  }
  send({ type: 'subscribed', sent: clients.length });
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
      void Promise.allSettled(clients.map((c) => c.dispose())).then(() => {
        send({ type: 'closed' });
        setTimeout(() => process.exit(subscriptionErrors > 0 ? 2 : 0), 50);
      });
      return;
  }
});
