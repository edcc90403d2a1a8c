import type { TypedDocumentString } from '../gql/graphql';
import { freshToken, type Bearer } from './bearer';

/** A GraphQL error as the gateway reports it: `extensions.code` is the REST error type. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly param: string | null = null,
    /** `extensions.reason`: the REST error `code`, e.g. idempotency_key_in_use. */
    readonly reason: string | null = null,
  ) {
    super(message);
  }
}

/** Fired on window when the gateway refuses the credential itself. */
export const CREDENTIAL_REFUSED = 'svc:credential-refused';

type Variables<V> = V extends Record<string, never> ? Record<string, never> | undefined : V;

/** One POST /graphql with `Authorization: Bearer <token>`; a GraphQL error is thrown as ApiError. */
async function post<R>(token: string, query: string, variables: unknown): Promise<R> {
  let res: Response;
  try {
    res = await fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
  } catch {
    throw new ApiError('The gateway could not be reached.', 'network_error');
  }
  const body = (await res.json().catch(() => null)) as { data?: R; errors?: Array<{ message: string; extensions?: { code?: string; param?: string; reason?: string } }> } | null;
  const first = body?.errors?.[0];
  if (first) throw new ApiError(first.message, first.extensions?.code ?? 'error', first.extensions?.param ?? null, first.extensions?.reason ?? null);
  if (!body?.data) throw new ApiError(`The gateway answered ${res.status}.`, 'http_error');
  return body.data;
}

/**
 * Queries and mutations over HTTP POST /graphql. A renewed sign-in's token is read at each call;
 * when the gateway refuses it (it expired before the renewal came), the call waits for a renewal
 * and is sent once more: the gateway refused the credential before running anything, so even a
 * mutation is safe to send again.
 */
export async function execute<R, V>(bearer: Bearer, doc: TypedDocumentString<R, V>, variables?: Variables<V>): Promise<R> {
  let token = await freshToken(bearer);
  for (let attempt = 0; ; attempt++) {
    try {
      return await post<R>(token, doc.toString(), variables ?? {});
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'authentication_error') throw err;
      const again = attempt === 0 && typeof bearer !== 'string' ? await bearer.refused(token) : null;
      if (again) {
        token = again;
        continue;
      }
      // An expired or revoked credential that no renewal fixes: the app signs out (see app.tsx).
      dispatchEvent(new CustomEvent(CREDENTIAL_REFUSED, { detail: token }));
      throw err;
    }
  }
}

/** What to show for a failed call: the gateway's message, with the field it names. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) return err.param ? `${err.message} (${err.param})` : err.message;
  return err instanceof Error ? err.message : String(err);
}
