/**
 * A TCP proxy the test owns, in front of a server it must not touch (the machine's PostgreSQL):
 * `cut()` drops every connection and refuses new ones, `restore()` listens again on the same port.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  /** Holds every byte both ways, on open and new connections, until `resume` (a stalled server). */
  stall(): void;
  resume(): void;
  /** Connections open through it now. */
  readonly open: number;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  /** Each connection's two sides; a stall unpipes them (a paused source that is piped is resumed when its destination drains). */
  const pairs = new Set<[Socket, Socket]>();
  const join = ([client, upstream]: [Socket, Socket]) => {
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const hold = ([client, upstream]: [Socket, Socket]) => {
    client.unpipe(upstream);
    upstream.unpipe(client);
    client.pause();
    upstream.pause();
  };
  let server: Server;
  let port = 0;
  let stalled = false;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        const upstream = connect(targetPort, targetHost);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        const pair: [Socket, Socket] = [client, upstream];
        pairs.add(pair);
        client.on('close', () => pairs.delete(pair));
        if (stalled) hold(pair);
        else join(pair);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as { port: number }).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  await listen();
  return {
    get port() {
      return port;
    },
    get open() {
      return pairs.size;
    },
    cut: stop,
    stall: () => {
      stalled = true;
      for (const pair of pairs) hold(pair);
    },
    resume: () => {
      stalled = false;
      for (const pair of pairs) join(pair);
    },
    restore: listen,
    close: stop,
  };
}

/** A proxy in front of the PostgreSQL behind `databaseUrl`, and that URL rewritten to go through it. */
export async function proxiedDatabaseUrl(databaseUrl: string): Promise<{ proxy: TcpProxy; url: string }> {
  const real = new URL(databaseUrl);
  const proxy = await startTcpProxy(real.hostname, Number(real.port || 5432));
  const viaProxy = new URL(databaseUrl);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  return { proxy, url: viaProxy.toString() };
}
