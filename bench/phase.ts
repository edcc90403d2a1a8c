/** What a bench phase asks of the load worker, and what it reports back. */
import type autocannon from 'autocannon';
import type { IntervalHistogram } from 'node:perf_hooks';

export interface LoadJob {
  id: string;
  title: string;
  target: Target;
  streamed: boolean;
  url: string;
  /** Collect each 2xx answer's call id and x-svc-credits (gateway phases), for the money check. */
  collectCharges?: boolean;
  path: string;
  body: string;
  /** API keys rotated request by request (the direct phases use one dummy key). */
  keys: string[];
  /** A response body without this text counts as invalid (`[DONE]` for streams). */
  expectInBody: string;
  connections: number;
  durationSeconds: number;
  /** This many calls in all instead of a time (durationSeconds is then ignored): one pass over the keys, each called once. */
  amount?: number;
}

/** `committing`: the bare pass-through plus one committed charge row per call (committing-proxy.ts). */
export type Target = 'direct' | 'bare' | 'committing' | 'gateway';

export interface LatencySummary {
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface PhaseResult {
  id: string;
  title: string;
  target: Target;
  streamed: boolean;
  connections: number;
  durationSeconds: number;
  /** Gateway phases: the gateway event loop's busy time per answered call, and its utilisation. */
  gatewayBusyMsPerCall?: number;
  gatewayUtilization?: number;
  /** Gateway phases: CPU time of the gateway's thread per answered call (user + system, from /proc). */
  gatewayCpuMsPerCall?: number;
  /** The direct upstream and the pass-throughs: CPU time of their worker thread per answered call. */
  threadCpuMsPerCall?: number;
  /** Every target: the whole machine's busy time (all cores, all processes) per answered call. */
  machineCpuMsPerCall?: number;
  /** The outside phase (bench/outside.ts): CPU time of the target's whole process (every thread) per answered call. */
  processCpuMsPerCall?: number;
  /** The outside phase's gateway segments: credit leases taken per answered call (about 0 for warm keys, 1 for cold ones). */
  leaseTakesPerCall?: number;
  /** Gateway phases: every 2xx answer's call id and its x-svc-credits (null for streams, which carry none). */
  answered?: [string, number | null][];
  /** Every 2xx latency, ms: kept until the segments of a phase are merged, not written to the results. */
  rawLatencies?: number[];
  /** Segments the phase ran in (interleaved with the other targets' segments of the same load). */
  segments?: number;
  /** Gateway phases: gateway / bare req/s of each round (each its own segment pair, run back to back). */
  roundRatios?: number[];
  /** 2xx responses per second over the run. */
  requestsPerSecond: number;
  completed2xx: number;
  /** Milliseconds, from every 2xx response (fractional; autocannon's own are whole ms). */
  latencyMs: LatencySummary;
  /** autocannon's own histogram, for comparison. */
  autocannonLatencyMs: { p50: number; p99: number };
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  invalidBodies: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The longest event-loop stall a `monitorEventLoopDelay` histogram saw, in ms. */
export const stallMs = (h: IntervalHistogram) => round(h.max / 1e6);

function latencySummary(latencies: number[]): LatencySummary {
  const sorted = Float64Array.from(latencies).sort();
  const sum = latencies.reduce((a, b) => a + b, 0);
  return {
    mean: round(latencies.length ? sum / latencies.length : 0),
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.length ? sorted[sorted.length - 1] : 0),
  };
}

export function summarize(
  job: LoadJob,
  result: autocannon.Result,
  latencies: number[],
  invalidBodies: number,
  answered?: [string, number | null][],
): PhaseResult {
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]));
  return {
    id: job.id,
    title: job.title,
    target: job.target,
    streamed: job.streamed,
    connections: job.connections,
    durationSeconds: round(result.duration, 2),
    requestsPerSecond: round(latencies.length / result.duration, 1),
    completed2xx: latencies.length,
    latencyMs: latencySummary(latencies),
    autocannonLatencyMs: { p50: result.latency.p50, p99: result.latency.p99 },
    statusCodes,
    errors: result.errors,
    timeouts: result.timeouts,
    invalidBodies,
    ...(answered ? { answered } : {}),
  };
}

/**
 * The segments of one phase as one result: req/s over their summed time, percentiles over every
 * response of every segment (autocannon's own histogram figures, whole milliseconds and kept for
 * comparison only, are the segments' median p50 and worst p99).
 */
export function mergeSegments(parts: PhaseResult[]): PhaseResult {
  const first = parts[0];
  const latencies = parts.flatMap((p) => p.rawLatencies ?? []);
  const durationSeconds = parts.reduce((n, p) => n + p.durationSeconds, 0);
  const statusCodes: Record<string, number> = {};
  for (const p of parts) for (const [code, n] of Object.entries(p.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  const p50s = parts.map((p) => p.autocannonLatencyMs.p50).sort((a, b) => a - b);
  const answered = parts.some((p) => p.answered) ? parts.flatMap((p) => p.answered ?? []) : undefined;
  return {
    id: first.id,
    title: first.title,
    target: first.target,
    streamed: first.streamed,
    connections: first.connections,
    durationSeconds: round(durationSeconds, 2),
    requestsPerSecond: round(latencies.length / Math.max(durationSeconds, 0.001), 1),
    completed2xx: latencies.length,
    latencyMs: latencySummary(latencies),
    autocannonLatencyMs: { p50: p50s[Math.floor(p50s.length / 2)], p99: Math.max(...parts.map((p) => p.autocannonLatencyMs.p99)) },
    statusCodes,
    errors: parts.reduce((n, p) => n + p.errors, 0),
    timeouts: parts.reduce((n, p) => n + p.timeouts, 0),
    invalidBodies: parts.reduce((n, p) => n + p.invalidBodies, 0),
    segments: parts.length,
    ...(answered ? { answered } : {}),
  };
}
