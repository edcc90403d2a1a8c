/**
 * The fan-out phase's results (bench/fanout.ts writes them, bench/fanout-report.ts renders them)
 * and the small helpers its files share: a timestamp every process agrees on, sleep, rounding.
 */
import { performance } from 'node:perf_hooks';

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
  settings: {
    rounds: number[];
    capPerAddress: number;
    jobs: number;
    subscription: string;
    simulatorVideoSeconds: number;
    perProcess: number;
    probeEveryMs: number;
    batch: number;
    clients: string;
  };
  eventBus: 'in-process' | 'redis';
  gc: 'global.gc (--expose-gc)' | 'v8 flag at run time' | 'none';
  rounds: FanoutRound[];
  seconds: number;
  error?: string;
}

export const now = () => performance.timeOrigin + performance.now();
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const r1 = (n: number) => Math.round(n * 10) / 10;
export const r3 = (n: number) => Math.round(n * 1000) / 1000;
/** Connections each client process has opening at once (the report quotes it). */
export const OPEN_CONCURRENCY = 64;
