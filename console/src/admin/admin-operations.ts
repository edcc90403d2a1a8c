import { graphql } from '../gql';

/** The operator console's operations, checked against schema/schema.graphql at build time. */

export const AdminAccountsQuery = graphql(`
  query AdminAccounts($search: String, $first: Int, $after: String) {
    adminAccounts(search: $search, first: $first, after: $after) {
      nodes {
        id
        subject
        balance
        member
        created
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

export const AdminAccountQuery = graphql(`
  query AdminAccount($id: ID!) {
    adminAccount(id: $id) {
      id
      issuer
      subject
      balance
      member
      created
      keys {
        id
        name
        mode
        created
        lastUsed
      }
      purchases(first: 20) {
        nodes {
          id
          credits
          amountUsd
          status
          created
        }
        pageInfo {
          hasNextPage
        }
      }
    }
  }
`);

export const AdminLedgerQuery = graphql(`
  query AdminLedger($id: ID!, $first: Int, $after: String) {
    adminAccount(id: $id) {
      id
      ledger(first: $first, after: $after) {
        nodes {
          id
          kind
          credits
          reference
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
  }
`);

export const AdminGrantCreditsMutation = graphql(`
  mutation AdminGrantCredits($accountId: ID!, $credits: Float!, $reason: String!) {
    adminGrantCredits(accountId: $accountId, credits: $credits, reason: $reason) {
      id
      balance
      member
    }
  }
`);

export const AdminSetMemberMutation = graphql(`
  mutation AdminSetMember($accountId: ID!, $member: Boolean!) {
    adminSetMember(accountId: $accountId, member: $member) {
      id
      balance
      member
    }
  }
`);

export const AdminUpstreamsQuery = graphql(`
  query AdminUpstreams {
    adminUpstreams {
      id
      provider
      models
      state
      window {
        calls
        failures
      }
      lastError
      openedAt
    }
  }
`);

export const AdminDailyTotalsQuery = graphql(`
  query AdminDailyTotals($from: String, $to: String) {
    adminDailyTotals(from: $from, to: $to) {
      day
      sold
      spent
    }
  }
`);

export const AdminDeliveriesQuery = graphql(`
  query AdminDeliveries($keyId: ID, $jobId: ID) {
    adminWebhookDeliveries(keyId: $keyId, jobId: $jobId) {
      eventId
      eventType
      deliveryId
      attempt
      statusCode
      error
      durationMs
      created
    }
  }
`);

export const AuditLogQuery = graphql(`
  query AuditLog($first: Int, $after: String) {
    auditLog(first: $first, after: $after) {
      nodes {
        id
        actor
        action
        target
        before
        after
        created
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);
