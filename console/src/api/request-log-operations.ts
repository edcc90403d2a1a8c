import { graphql } from '../gql';

/** The request log, as the Activity view reads it (checked against schema/schema.graphql at build time). */
export const RequestsQuery = graphql(`
  query Requests($keyId: ID, $model: String, $status: Int, $outcome: RequestOutcome, $from: String, $to: String, $first: Int, $after: String) {
    requests(keyId: $keyId, model: $model, status: $status, outcome: $outcome, from: $from, to: $to, first: $first, after: $after) {
      nodes {
        id
        created
        keyId
        model
        endpoint
        status
        credits
        usage {
          promptTokens
          completionTokens
          images
          seconds
        }
        latencyMs
        idempotencyKey
        error {
          type
          code
        }
        jobId
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);
