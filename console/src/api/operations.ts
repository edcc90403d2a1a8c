import { graphql } from '../gql';

/** Every operation the console sends, checked against schema/schema.graphql at build time. */

export const AccountQuery = graphql(`
  query Account {
    account {
      id
      balance
      member
      created
      lowBalanceAlert
      webhook {
        url
      }
    }
  }
`);

export const UsageQuery = graphql(`
  query Usage($from: String, $to: String, $groupBy: UsageGroupBy) {
    usage(from: $from, to: $to, groupBy: $groupBy) {
      from
      to
      groupBy
      buckets {
        day
        keyId
        model
        credits
      }
    }
  }
`);

export const LedgerQuery = graphql(`
  query Ledger($first: Int, $after: String) {
    ledgerEntries(first: $first, after: $after) {
      nodes {
        id
        kind
        credits
        reference
        keyId
        model
        reason
        created
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

export const ModelsQuery = graphql(`
  query Models {
    models {
      id
      ownedBy
      capabilities
      provider
      description
      pricing {
        creditsPer10kTokens
        creditsPerImage
        creditsPerSecond
        video {
          duration
          resolution
          credits
        }
      }
    }
  }
`);

export const ApiKeysQuery = graphql(`
  query ApiKeys {
    apiKeys {
      id
      name
      mode
      allowedModels
      blockedModels
      dailySpendCap
      budgets {
        period
        credits
        spent
        resetsAt
      }
      webhook {
        url
      }
      created
      lastUsed
      expiresAt
      rotatedAt
      previousSecretUntil
    }
  }
`);

export const CreateApiKeyMutation = graphql(`
  mutation CreateApiKey($input: CreateApiKeyInput!) {
    createApiKey(input: $input) {
      id
      name
      mode
      key
    }
  }
`);

export const UpdateApiKeyMutation = graphql(`
  mutation UpdateApiKey($id: ID!, $input: UpdateApiKeyInput!) {
    updateApiKey(id: $id, input: $input) {
      id
    }
  }
`);

export const RevokeApiKeyMutation = graphql(`
  mutation RevokeApiKey($id: ID!) {
    revokeApiKey(id: $id)
  }
`);

export const SetWebhookMutation = graphql(`
  mutation SetWebhook($keyId: ID!, $url: String) {
    setWebhook(keyId: $keyId, url: $url) {
      url
      secret
    }
  }
`);

export const RegenerateWebhookSecretMutation = graphql(`
  mutation RegenerateWebhookSecret($keyId: ID!) {
    regenerateWebhookSecret(keyId: $keyId) {
      url
      secret
    }
  }
`);

export const WebhookDeliveriesQuery = graphql(`
  query WebhookDeliveries($keyId: ID!) {
    webhookDeliveries(keyId: $keyId, first: 50) {
      ...DeliveryFields
    }
  }
`);

export const DeliveryFieldsFragment = graphql(`
  fragment DeliveryFields on WebhookDelivery {
    eventId
    eventType
    deliveryId
    attempt
    statusCode
    error
    durationMs
    created
  }
`);

export const VideoJobsQuery = graphql(`
  query VideoJobs($first: Int, $after: String, $status: VideoJobStatus) {
    videoJobs(first: $first, after: $after, status: $status) {
      edges {
        cursor
        node {
          ...JobFields
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

export const JobFieldsFragment = graphql(`
  fragment JobFields on VideoJob {
    id
    model
    status
    creditsCharged
    testMode
    creditsUsed
    progress
    url
    reason
    createdAt
    updatedAt
  }
`);

export const CancelVideoJobMutation = graphql(`
  mutation CancelVideoJob($id: ID!) {
    cancelVideoJob(id: $id) {
      ...JobFields
    }
  }
`);

export const JobsUpdatedSubscription = graphql(`
  subscription JobsUpdated {
    videoJobsUpdated {
      ...JobFields
    }
  }
`);

export const VideoQuoteQuery = graphql(`
  query VideoQuote($input: VideoQuoteInput!) {
    videoQuote(input: $input) {
      model
      duration
      resolution
      credits
      estimatedCostUsd {
        member
        nonMember
      }
    }
  }
`);

export const QueueVideoMutation = graphql(`
  mutation QueueVideo($input: QueueVideoInput!, $idempotencyKey: String) {
    queueVideo(input: $input, idempotencyKey: $idempotencyKey) {
      ...JobFields
    }
  }
`);

export const QueueMotionControlMutation = graphql(`
  mutation QueueMotionControl($input: MotionControlInput!, $idempotencyKey: String) {
    queueMotionControl(input: $input, idempotencyKey: $idempotencyKey) {
      ...JobFields
    }
  }
`);
