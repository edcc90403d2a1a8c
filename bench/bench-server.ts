/**
 * The bench's servers, whatever runs them (a worker thread, upstream-worker.ts; a child process,
 * server-process.ts): the instant upstream; with `bareProxyTo` the bare pass-through in front of
 * it; with `bareProxyTo` and `commitTo` the committing pass-through (committing-proxy.ts); with
 * `otlpSink` a trace collector (otlp-sink.ts) counting into `counts`.
 */
import type { Server } from 'node:http';
import { createInstantUpstream } from './instant-upstream';
import { createBareProxy } from './bare-proxy';
import { createCommittingProxy } from './committing-proxy';
import { createOtlpSink, type SinkCounts } from './otlp-sink';

export interface BenchServerOptions {
  bareProxyTo?: string;
  commitTo?: string;
  otlpSink?: boolean;
}

export async function startBenchServer(options: BenchServerOptions, counts: SinkCounts): Promise<{ server: Server; close(): Promise<void> }> {
  const { bareProxyTo, commitTo, otlpSink } = options;
  if (otlpSink) return { server: createOtlpSink(counts), close: async () => undefined };
  if (bareProxyTo && commitTo) return createCommittingProxy(bareProxyTo, commitTo);
  return { server: bareProxyTo ? createBareProxy(bareProxyTo) : createInstantUpstream(), close: async () => undefined };
}
