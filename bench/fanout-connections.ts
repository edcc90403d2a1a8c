/**
 * The fan-out bench's subscriber connections, two ways over the same protocol: `wire` (default,
 * bench/graphql-ws-wire.ts, a frame reader that leaves the cores to the gateway under test) and
 * `graphql-ws` (the library's createClient over `ws`, as an application would hold one).
 * BENCH_FANOUT_CLIENT picks one. Either way a connection is open once the server acknowledged
 * connection_init (the API key was checked), and each subscription's results arrive with the
 * time they were read.
 */
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import { WireClient } from './graphql-ws-wire';

export type ClientKind = 'wire' | 'graphql-ws';

export interface ResultSink {
  next(data: Record<string, unknown> | undefined, receivedAt: number): void;
  error(): void;
  complete(): void;
}

export interface SubscriberConnection {
  subscribe(query: string, sink: ResultSink): void;
  dispose(): Promise<void>;
}

export function clientKind(raw: string | undefined): ClientKind {
  if (raw === undefined || raw === '' || raw === 'wire') return 'wire';
  if (raw === 'graphql-ws') return 'graphql-ws';
  throw new Error('BENCH_FANOUT_CLIENT must be wire or graphql-ws');
}

export function openConnection(kind: ClientKind, url: string, token: string, now: () => number, localAddress?: string): Promise<SubscriberConnection> {
  return kind === 'wire' ? openWire(url, token, now, localAddress) : openLibrary(url, token, now, localAddress);
}

async function openWire(url: string, token: string, now: () => number, localAddress?: string): Promise<SubscriberConnection> {
  const sinks = new Map<string, ResultSink>();
  let acknowledged: (() => void) | undefined;
  let refused: ((err: Error) => void) | undefined;
  const ready = new Promise<void>((ok, fail) => {
    acknowledged = ok;
    refused = fail;
  });
  const client = await WireClient.open(
    url,
    {
      message: (m, receivedAt) => {
        const sink = typeof m.id === 'string' ? sinks.get(m.id) : undefined;
        switch (m.type) {
          case 'connection_ack':
            acknowledged?.();
            return;
          case 'ping':
            client.send({ type: 'pong' });
            return;
          case 'next':
            sink?.next((m.payload as { data?: Record<string, unknown> } | undefined)?.data, receivedAt);
            return;
          case 'error':
            sinks.delete(m.id as string);
            sink?.error();
            return;
          case 'complete':
            sinks.delete(m.id as string);
            sink?.complete();
        }
      },
      closed: (code, reason) => {
        refused?.(new Error(`closed ${code} ${reason}`.trim()));
        for (const sink of sinks.values()) sink.error();
        sinks.clear();
      },
    },
    now,
    localAddress,
  );
  client.send({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } });
  await ready;
  let nextId = 1;
  return {
    subscribe(query, sink) {
      const id = String(nextId++);
      sinks.set(id, sink);
      client.send({ id, type: 'subscribe', payload: { query } });
    },
    async dispose() {
      sinks.clear();
      client.close();
    },
  };
}

/** A ws WebSocket bound to one local address (graphql-ws constructs it with url and protocol only). */
function boundTo(localAddress: string | undefined): unknown {
  if (!localAddress) return WebSocket;
  return class extends WebSocket {
    constructor(address: string | URL, protocols?: string | string[]) {
      super(address, protocols, { localAddress });
    }
  };
}

function openLibrary(url: string, token: string, now: () => number, localAddress?: string): Promise<SubscriberConnection> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const client = createClient({
      url,
      webSocketImpl: boundTo(localAddress),
      lazy: false,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${token}` },
      on: {
        connected: () => {
          if (settled) return;
          settled = true;
          resolve({
            subscribe(query, sink) {
              client.subscribe<Record<string, unknown>>(
                { query },
                { next: (result) => sink.next(result.data ?? undefined, now()), error: () => sink.error(), complete: () => sink.complete() },
              );
            },
            dispose: async () => client.dispose(),
          });
        },
        closed: (e) => {
          const ev = e as { code?: number; reason?: string };
          if (!settled) ((settled = true), reject(new Error(`closed ${ev.code ?? '?'} ${ev.reason ?? ''}`.trim())));
        },
        error: (e) => {
          if (!settled) ((settled = true), reject(e instanceof Error ? e : new Error(String((e as { message?: string })?.message ?? e))));
        },
      },
      // Without an operation a non-lazy client would be closed by nothing; errors are reported above.
      onNonLazyError: () => undefined,
    });
  });
}
