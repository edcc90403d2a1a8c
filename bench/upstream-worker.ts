/** Worker-thread entry: runs the instant upstream on 127.0.0.1 and posts back its port. */
import { parentPort } from 'node:worker_threads';
import type { AddressInfo } from 'node:net';
import { createInstantUpstream } from './instant-upstream';

const server = createInstantUpstream();
server.listen(0, '127.0.0.1', () => {
  parentPort!.postMessage({ port: (server.address() as AddressInfo).port });
});
parentPort!.on('message', (msg: unknown) => {
  if (msg === 'close') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
