/**
 * Worker-thread entry for the bench's servers (bench-server.ts; workerData is its options).
 * Listens on 127.0.0.1 and posts back its port; closes on 'close'; answers 'cpu' with its
 * thread's CPU time so far (ms, or null off Linux) and, for a trace collector, 'counts' with what it received.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { AddressInfo } from 'node:net';
import { startBenchServer, type BenchServerOptions } from './bench-server';
import type { SinkCounts } from './otlp-sink';
import { threadCpuMs } from './thread-cpu';

const counts: SinkCounts = { exports: 0, spans: 0 };

void startBenchServer((workerData ?? {}) as BenchServerOptions, counts).then(({ server, close }) => {
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
