/**
 * What the fan-out phase measures the gateway with: its memory after forced GC (and how GC is
 * forced), latency summaries of delivery times and of the /healthz probes in a window, and the
 * event bus wrapped to stamp each terminal publish and count the subscriptions listening.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { JobEvent, JobEventBus } from '../src/domain/events/job-events';
import { percentile } from './phase';
import { r1, r3, sleep, type FanoutLatency, type FanoutResult, type MemorySnapshot, type Probes } from './fanout-types';

/** global.gc under --expose-gc; otherwise the flag set at run time (works on Node 20), else none. */
export function findGc(): { gc?: () => void; how: FanoutResult['gc'] } {
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

export async function snapshot(gc: (() => void) | undefined): Promise<MemorySnapshot> {
  // Let sockets and timers settle, then collect twice (the second pass takes what the first freed).
  await sleep(300);
  gc?.();
  await sleep(50);
  gc?.();
  const m = process.memoryUsage();
  const mb = (n: number) => r1(n / 1048576);
  return { rssMB: mb(m.rss), heapUsedMB: mb(m.heapUsed), externalMB: mb(m.external), arrayBuffersMB: mb(m.arrayBuffers) };
}

export function perItemKB(after: MemorySnapshot, before: MemorySnapshot, n: number) {
  const kb = (a: number, b: number) => (n > 0 ? r1(((a - b) * 1024) / n) : 0);
  return { heapUsed: kb(after.heapUsedMB, before.heapUsedMB), external: kb(after.externalMB, before.externalMB), rss: kb(after.rssMB, before.rssMB) };
}

export function latency(samples: number[]): FanoutLatency {
  const sorted = Float64Array.from(samples).sort();
  return { first: r3(sorted[0] ?? 0), p50: r3(percentile(sorted, 50)), p99: r3(percentile(sorted, 99)), max: r3(sorted[sorted.length - 1] ?? 0) };
}

export type Sample = [sentAt: number, ms: number, status: number];

/** The probes whose time in flight overlaps any of the windows. */
export function probesIn(samples: Sample[], windows: Array<[number, number]>): Probes {
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

/** Wraps the bus for the phase: stamps publish() of a terminal state and counts the subscriptions listening. */
export function instrument(bus: JobEventBus, onPublish: (event: JobEvent) => void) {
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
      if (on) ((on = false), listeners--);
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
