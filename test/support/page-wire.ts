import type { Page } from 'playwright-core';

export interface GraphQLCall {
  token: string;
  status: number;
  /** When the answer reached the test (its clock). */
  at: number;
}

export interface SocketSeen {
  /** The credential its connection_init carried. */
  token: string | null;
  /** Every frame the gateway sent on it. */
  received: string[];
}

/**
 * What a page says to the gateway's /graphql, as the browser sends it: each HTTP call's bearer and
 * answer status, and each WebSocket's connection_init credential and the frames it received.
 */
export function recordWire(page: Page): { graphql: GraphQLCall[]; sockets: SocketSeen[] } {
  const graphql: GraphQLCall[] = [];
  const sockets: SocketSeen[] = [];
  const bearer = (value: unknown) => String(value ?? '').replace(/^Bearer /, '');
  page.on('response', async (res) => {
    if (new URL(res.url()).pathname !== '/graphql') return;
    const at = Date.now();
    // A call answered as its test closes the page can no longer be read, and no assertion is left to read it.
    const headers = await res
      .request()
      .allHeaders()
      .catch((err: unknown) => {
        // Playwright's error for a target closed under it (its class is not exported).
        if (page.isClosed() || /has been closed/.test(String(err))) return null;
        throw err;
      });
    if (headers) graphql.push({ token: bearer(headers.authorization), status: res.status(), at });
  });
  page.on('websocket', (ws) => {
    if (new URL(ws.url()).pathname !== '/graphql') return;
    const seen: SocketSeen = { token: null, received: [] };
    sockets.push(seen);
    ws.on('framesent', (f) => {
      const m = JSON.parse(String(f.payload)) as { type?: string; payload?: { authorization?: string } };
      if (m.type === 'connection_init') seen.token = bearer(m.payload?.authorization);
    });
    ws.on('framereceived', (f) => seen.received.push(String(f.payload)));
  });
  return { graphql, sockets };
}
