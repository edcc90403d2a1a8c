/** Worker-thread entry: runs the bare pass-through (bare-proxy.ts) on 127.0.0.1 and posts back its port. */
import { parentPort, workerData } from 'node:worker_threads';
import type { AddressInfo } from 'node:net';
import { createBareProxy } from './bare-proxy';

const server = createBareProxy((workerData as { upstream: string }).upstream);
server.listen(0, '127.0.0.1', () => {
  parentPort!.postMessage({ port: (server.address() as AddressInfo).port });
});
parentPort!.on('message', (msg: unknown) => {
  if (msg === 'close') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
