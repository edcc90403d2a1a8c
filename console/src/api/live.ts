import { createClient, type Client } from 'graphql-ws';
import type { TypedDocumentString } from '../gql/graphql';

/** One graphql-ws connection per credential; subscriptions share it. */
export function liveClient(token: string): Client {
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`;
  return createClient({
    url,
    connectionParams: { authorization: `Bearer ${token}` },
    lazy: true,
    retryAttempts: Infinity,
    shouldRetry: () => true,
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
