import { createClient, type Client } from 'graphql-ws';
import type { TypedDocumentString } from '../gql/graphql';
import { CREDENTIAL_REFUSED } from './client';
import { freshToken, type Bearer } from './bearer';

const refused = (e: unknown): boolean => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 4403;

/** graphql-ws's own wait between reconnections: 2^n seconds and a random 0.3–3 s. */
const backoff = (retries: number) => new Promise((r) => setTimeout(r, 2 ** retries * 1000 + 300 + Math.random() * 2700));

/**
 * One graphql-ws connection per sign-in; subscriptions share it. The gateway checks the token when
 * the socket connects and again for each new operation on it, so the socket follows the token:
 * connectionParams reads it at each (re)connection, and a renewal reconnects at once (no backoff).
 * Subscriptions resume on the new socket and the views read their data again on 'connected', so
 * nothing that changed in between is missed.
 */
export function liveClient(bearer: Bearer): Client {
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`;
  const source = typeof bearer === 'string' ? null : bearer;
  let used = '';
  let active = false;
  let reconnectNow = false;
  let renewing: Promise<string | null> | null = null;
  let gaveUp = false;
  // graphql-ws asks once per subscription about the same close: answer them all alike.
  let lastClose: unknown = null;
  let lastAnswer = false;

  const giveUp = () => {
    gaveUp = true;
    dispatchEvent(new CustomEvent(CREDENTIAL_REFUSED, { detail: used }));
  };
  // 4403: the gateway refused the credential (expired, revoked). Retried only when a renewal may
  // answer a token it accepts; otherwise the app signs out.
  const shouldRetry = (e: unknown): boolean => {
    if (!refused(e)) return true;
    if (e === lastClose) return lastAnswer;
    lastClose = e;
    lastAnswer = !gaveUp && source !== null && source.mayRetry(used);
    if (lastAnswer) renewing = source!.refused(used);
    else if (!gaveUp) giveUp();
    return lastAnswer;
  };

  const client = createClient({
    url,
    connectionParams: async () => {
      used = await freshToken(bearer);
      return { authorization: `Bearer ${used}` };
    },
    lazy: true,
    // A second before closing once the last subscription ends: moving from one view to another
    // keeps the socket (and its views do not read everything again as after a reconnection).
    lazyCloseTimeout: 1000,
    retryAttempts: Infinity,
    shouldRetry,
    retryWait: async (retries) => {
      const renewal = renewing;
      renewing = null;
      if (renewal) {
        if (!(await renewal)) giveUp();
        return;
      }
      if (reconnectNow) {
        reconnectNow = false;
        return;
      }
      await backoff(retries);
    },
    on: {
      connecting: () => (active = true),
      closed: () => (active = false),
    },
  });
  source?.onRenewed(() => {
    // No socket (no subscription open): the next one connects with the new token anyway.
    if (!active) return;
    reconnectNow = true;
    client.terminate();
  });
  return client;
}

/** Calls `onData` with each result of a subscription; answers the function that ends it. */
export function subscribe<R>(client: Client, doc: TypedDocumentString<R, Record<string, never>>, onData: (data: R) => void, onError: (message: string) => void): () => void {
  return client.subscribe<R>(
    { query: doc.toString() },
    {
      next: (result) => {
        if (result.data) onData(result.data as R);
        else if (result.errors?.[0]) onError(result.errors[0].message);
      },
      error: (err) => onError(err instanceof Error ? err.message : 'The live connection closed.'),
      complete: () => undefined,
    },
  );
}
