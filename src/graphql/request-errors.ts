/**
 * Apollo Server refuses malformed HTTP requests itself (wrong method, no body, a batch, a
 * possible cross-site request) before any of our code runs, with messages that name Apollo or
 * its features. Its status, headers and `BAD_REQUEST` code are right; only the words are
 * replaced, here, where formatError (the one error path) writes every error. Matched by the
 * start of Apollo 5's texts: a text this table does not know goes out unchanged, so an Apollo
 * upgrade that rewords one shows up in test/e2e/graphql-http-refusals.test.ts, not as a failure.
 */
const REWORDED: ReadonlyArray<readonly [RegExp, string]> = [
  [/^Apollo Server supports only GET\/POST requests/, '/graphql takes GET (queries only) and POST requests.'],
  [
    /^This operation has been blocked as a potential Cross-Site Request Forgery/,
    'Refused as a possible cross-site request: send an Authorization header (or a Content-Type of application/json), which a browser sends to another site only after a preflight.',
  ],
  [/^Operation batching disabled/, 'Batching is not supported: send one operation per request.'],
  [
    /^POST body missing, invalid Content-Type, or JSON object has no keys/,
    'A POST to /graphql needs Content-Type: application/json and a JSON object with a query.',
  ],
  [/^GraphQL operations must contain a non-empty `query`/, 'The request has no query.'],
  [/^GraphQL queries must be strings/, 'The query must be a string in the GraphQL language.'],
  [/^Apollo server received an operation that uses incremental delivery/i, 'Incremental delivery (@defer, @stream) is not supported.'],
  // graphql-sse and other SSE clients ask for text/event-stream only.
  [
    /^An 'accept' header was provided for this request which does not accept/,
    '/graphql answers application/json or application/graphql-response+json, which the Accept header allows neither of; subscriptions are served over WebSocket (graphql-transport-ws) at /graphql.',
  ],
];

/** Our words for one of Apollo's HTTP refusals; any other message as it is. */
export function requestRefusalMessage(message: string): string {
  for (const [pattern, ours] of REWORDED) if (pattern.test(message)) return ours;
  return message;
}
