/**
 * Worker-thread entry for the bench's servers: the instant upstream, or (with workerData
 * `{ bareProxyTo }`) the bare pass-through in front of it. Listens on 127.0.0.1 and posts back
 * its port; closes on 'close'.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { AddressInfo } from 'node:net';
import { createInstantUpstream } from './instant-upstream';
import { createBareProxy } from './bare-proxy';

const target = (workerData as { bareProxyTo?: string } | undefined)?.bareProxyTo;
const server = target ? createBareProxy(target) : createInstantUpstream();
server.listen(0, '127.0.0.1', () => {
  parentPort!.postMessage({ port: (server.address() as AddressInfo).port });
});
parentPort!.on('message', (msg: unknown) => {
  if (msg === 'close') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
