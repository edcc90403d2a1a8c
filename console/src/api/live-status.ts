import type { Client } from 'graphql-ws';

/**
 * The live socket's state, as the views need it: `idle` (no subscription, so no socket: closed on
 * purpose), `connecting` (a first connection under way), `connected`, or `down` (lost or refused
 * by the network, graphql-ws retrying; it stays `down` through the retries until one connects).
 */
export type LiveState = 'idle' | 'connecting' | 'connected' | 'down';

export interface LiveStatus {
  get(): LiveState;
  /** Called on each change; answers the function that stops listening. */
  listen(listener: (state: LiveState) => void): () => void;
}

/** 1000: graphql-ws closed it itself (its last subscription ended, or the sign-in ended). */
const NORMAL_CLOSURE = 1000;

export function trackLiveStatus(client: Client): LiveStatus {
  let state: LiveState = 'idle';
  const listeners = new Set<(state: LiveState) => void>();
  const to = (next: LiveState) => {
    if (next === state) return;
    state = next;
    for (const listener of listeners) listener(next);
  };
  client.on('connecting', (isRetry) => to(isRetry ? 'down' : 'connecting'));
  client.on('connected', () => to('connected'));
  client.on('closed', (event) => to((event as { code?: number } | undefined)?.code === NORMAL_CLOSURE ? 'idle' : 'down'));
  return {
    get: () => state,
    listen: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
