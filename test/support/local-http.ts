import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts `server` on a free loopback port; answers its origin. */
export async function listenLocal(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Stops `server`, cutting the connections a test left open. */
export async function closeNow(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
}
