import { graphql } from '../gql';

/** The operations of buying credits (checked against schema/schema.graphql at build time). */

export const CreditPriceQuery = graphql(`
  query CreditPrice {
    creditPrice {
      usdPerCredit
      memberBonus
      min
      max
    }
  }
`);

export const CreditQuoteQuery = graphql(`
  query CreditQuote($credits: Int!) {
    creditQuote(credits: $credits) {
      credits
      amountUsd
      creditsGranted
      member
    }
  }
`);

export const CreateCheckoutMutation = graphql(`
  mutation CreateCheckout($credits: Int!) {
    createCheckout(credits: $credits) {
      id
      url
    }
  }
`);

export const PurchaseFields = graphql(`
  fragment PurchaseFields on Purchase {
    id
    credits
    amountUsd
    status
    created
  }
`);

export const PurchasesQuery = graphql(`
  query Purchases($first: Int, $after: String) {
    purchases(first: $first, after: $after) {
      nodes {
        ...PurchaseFields
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

export const PurchaseQuery = graphql(`
  query Purchase($id: ID!) {
    purchase(id: $id) {
      ...PurchaseFields
    }
    account {
      id
      balance
    }
  }
`);

export const AccountUpdatedSubscription = graphql(`
  subscription AccountUpdated {
    accountUpdated {
      account {
        id
        balance
      }
      purchase {
        ...PurchaseFields
      }
    }
  }
`);
