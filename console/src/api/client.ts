import type { TypedDocumentString } from '../gql/graphql';

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

/** Queries and mutations over HTTP POST /graphql with `Authorization: Bearer <credential>`. */
export async function execute<R, V>(token: string, doc: TypedDocumentString<R, V>, variables?: Variables<V>): Promise<R> {
  let res: Response;
  try {
    res = await fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: doc.toString(), variables: variables ?? {} }),
    });
  } catch {
    throw new ApiError('The gateway could not be reached.', 'network_error');
  }
  const body = (await res.json().catch(() => null)) as { data?: R; errors?: Array<{ message: string; extensions?: { code?: string; param?: string; reason?: string } }> } | null;
  const first = body?.errors?.[0];
  if (first) {
    const code = first.extensions?.code ?? 'error';
    // An expired or revoked credential: the app signs out (see app.tsx).
    if (code === 'authentication_error') dispatchEvent(new CustomEvent(CREDENTIAL_REFUSED, { detail: token }));
    throw new ApiError(first.message, code, first.extensions?.param ?? null, first.extensions?.reason ?? null);
  }
  if (!body?.data) throw new ApiError(`The gateway answered ${res.status}.`, 'http_error');
  return body.data;
}

/** What to show for a failed call: the gateway's message, with the field it names. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) return err.param ? `${err.message} (${err.param})` : err.message;
  return err instanceof Error ? err.message : String(err);
}
