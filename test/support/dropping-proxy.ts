/**
 * An HTTP proxy in front of the gateway that loses answers: the next `dropNext` requests are
 * forwarded and answered in full by the gateway, and then the proxy cuts the client's connection
 * instead of relaying the answer (a response lost in transit). Everything else is relayed.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DroppingProxy {
  url: string;
  /** Drop the answers of the next `n` requests. */
  dropNext(n: number): void;
  /** What the gateway answered to each request the proxy forwarded, in order. */
  forwarded: Array<{ path: string; status: number; dropped: boolean; idempotencyKey?: string }>;
  close(): Promise<void>;
}

export async function startDroppingProxy(target: string): Promise<DroppingProxy> {
  let drop = 0;
  const forwarded: DroppingProxy['forwarded'] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !['host', 'connection', 'content-length', 'transfer-encoding'].includes(name)) headers.set(name, String(value));
    }
    const answer = await fetch(target + req.url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    const body = Buffer.from(await answer.arrayBuffer());
    const dropped = drop > 0;
    if (dropped) drop--;
    forwarded.push({ path: req.url ?? '', status: answer.status, dropped, idempotencyKey: req.headers['idempotency-key'] as string | undefined });
    if (dropped) {
      req.socket.destroy();
      return;
    }
    const out: Record<string, string> = {};
    answer.headers.forEach((v, k) => {
      if (!['content-length', 'transfer-encoding', 'connection', 'content-encoding'].includes(k)) out[k] = v;
    });
    res.writeHead(answer.status, out).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    dropNext: (n) => void (drop = n),
    forwarded,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
