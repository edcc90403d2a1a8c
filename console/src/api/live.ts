import { createClient, type Client } from 'graphql-ws';
import type { TypedDocumentString } from '../gql/graphql';
import { CREDENTIAL_REFUSED } from './client';

const refused = (e: unknown): boolean => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 4403;

/** One graphql-ws connection per credential; subscriptions share it. */
export function liveClient(token: string): Client {
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`;
  return createClient({
    url,
    connectionParams: { authorization: `Bearer ${token}` },
    lazy: true,
    retryAttempts: Infinity,
    // 4403: the gateway refused the credential (expired, revoked); retrying cannot help.
    shouldRetry: (e) => !refused(e),
    on: {
      closed: (e) => {
        if (refused(e)) dispatchEvent(new CustomEvent(CREDENTIAL_REFUSED, { detail: token }));
      },
    },
  });
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
