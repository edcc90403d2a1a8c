/**
 * Worker-thread entry for the bench's servers: the instant upstream; with workerData
 * `{ bareProxyTo }` the bare pass-through in front of it; with `{ bareProxyTo, commitTo }` the
 * committing pass-through (committing-proxy.ts); with `{ otlpSink: true }` a trace collector
 * (otlp-sink.ts), which answers 'counts' with what it received. Listens on 127.0.0.1 and posts back its port;
 * closes on 'close'; answers 'cpu' with its thread's CPU time so far (ms, or null off Linux).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInstantUpstream } from './instant-upstream';
import { createBareProxy } from './bare-proxy';
import { createCommittingProxy } from './committing-proxy';
import { createOtlpSink, type SinkCounts } from './otlp-sink';
import { threadCpuMs } from './thread-cpu';

const counts: SinkCounts = { exports: 0, spans: 0 };

async function start(): Promise<{ server: Server; close(): Promise<void> }> {
  const { bareProxyTo, commitTo, otlpSink } = (workerData ?? {}) as { bareProxyTo?: string; commitTo?: string; otlpSink?: boolean };
  if (otlpSink) return { server: createOtlpSink(counts), close: async () => undefined };
  if (bareProxyTo && commitTo) return createCommittingProxy(bareProxyTo, commitTo);
  return { server: bareProxyTo ? createBareProxy(bareProxyTo) : createInstantUpstream(), close: async () => undefined };
}

void start().then(({ server, close }) => {
  server.listen(0, '127.0.0.1', () => {
    parentPort!.postMessage({ port: (server.address() as AddressInfo).port });
  });
  parentPort!.on('message', (msg: unknown) => {
    if (msg === 'cpu') parentPort!.postMessage({ cpuMs: threadCpuMs() });
    if (msg === 'counts') parentPort!.postMessage({ counts });
    if (msg === 'close') {
      server.closeAllConnections();
      server.close(() => void close().finally(() => process.exit(0)));
    }
  });
});
