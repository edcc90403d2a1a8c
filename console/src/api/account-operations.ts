import { graphql } from '../gql';

/** The operations of key rotation, the account's alerts and its webhook (checked against schema/schema.graphql at build time). */

export const RotateApiKeyMutation = graphql(`
  mutation RotateApiKey($id: ID!, $graceSeconds: Int) {
    rotateApiKey(id: $id, graceSeconds: $graceSeconds) {
      id
      key
      rotatedAt
      previousSecretUntil
    }
  }
`);

export const SetLowBalanceAlertMutation = graphql(`
  mutation SetLowBalanceAlert($lowBalanceAlert: Float) {
    setLowBalanceAlert(lowBalanceAlert: $lowBalanceAlert) {
      id
      lowBalanceAlert
    }
  }
`);

export const SetAccountWebhookMutation = graphql(`
  mutation SetAccountWebhook($url: String) {
    setAccountWebhook(url: $url) {
      url
      secret
    }
  }
`);

export const RegenerateAccountWebhookSecretMutation = graphql(`
  mutation RegenerateAccountWebhookSecret {
    regenerateAccountWebhookSecret {
      url
      secret
    }
  }
`);

export const AccountWebhookDeliveriesQuery = graphql(`
  query AccountWebhookDeliveries($first: Int) {
    accountWebhookDeliveries(first: $first) {
      ...DeliveryFields
    }
  }
`);
