/**
 * The payment provider, as the purchases need it: a hosted checkout for a price, and the events
 * its webhook sends, verified and read into what they mean here. Its adapter
 * (infra/payments/stripe-payments.ts) speaks Stripe's API with the official package; nothing of
 * Stripe's objects crosses this port.
 */

/** A checkout for one purchase: the price is charged, and `creditsMicro` granted once it is paid. */
export interface CheckoutRequest {
  accountId: string;
  /** Whole credits asked for: the price's base and the line item's label. */
  credits: number;
  /** What the purchase grants, fixed by the server (a member's bonus included). */
  creditsMicro: number;
  amountCents: number;
  successUrl: string;
  cancelUrl: string;
}

/** A hosted checkout page: `id` names the purchase from now on. */
export interface CheckoutSession {
  id: string;
  url: string;
}

/** What a verified event means for a purchase. */
export type PaymentEvent =
  /** The session's payment succeeded (at once, or later for a delayed payment method). */
  | { kind: 'paid'; type: string; sessionId: string; accountId: string; creditsMicro: number; amountCents: number; paymentIntent: string | null }
  /** The session ended unpaid: it expired, or its delayed payment failed. */
  | { kind: 'closed'; type: string; sessionId: string; status: 'expired' | 'failed' }
  /** A charge was refunded, in part or in full; `refundedCents` is the charge's total refunded so far. */
  | { kind: 'refunded'; type: string; paymentIntent: string; amountCents: number; refundedCents: number }
  /** Nothing to do: an event of another kind, a session not made here, a payment still under way. */
  | { kind: 'ignored'; type: string; why: string };

export interface PaymentProvider {
  /** Creates the hosted checkout; a provider that fails is an upstream_error and nothing is recorded. */
  createCheckout(request: CheckoutRequest): Promise<CheckoutSession>;
  /**
   * The event a webhook delivery carries, once its signature verifies against the endpoint's
   * secret at `nowMs` (300 s tolerance); anything that does not verify is an invalid_request_error.
   */
  verifyEvent(rawBody: Buffer, signature: string | undefined, nowMs: number): PaymentEvent;
}
