import Stripe from 'stripe';
import { DomainError, invalidRequest } from '../../domain/errors/domain-error';
import type { CheckoutRequest, CheckoutSession, PaymentEvent, PaymentProvider } from '../../domain/purchases/payment-provider';
import { checkoutMetadata, paymentEventOf } from './stripe-events';

/** Stripe's own replay window: an event signed longer ago than this is refused. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  /** STRIPE_API_BASE, read: where the API is (a test's fake, a Stripe-compatible server); unset, Stripe's own. */
  api?: { host: string; port: number; protocol: 'http' | 'https' };
}

const creditsLabel = (credits: number) => `${credits.toLocaleString('en-US')} credits`;

/**
 * Stripe Checkout through the official package: a session per purchase (one line item priced by
 * the server, the purchase's terms in its metadata), and webhook events verified by
 * `Stripe.webhooks.constructEvent` before they are read.
 */
export class StripePayments implements PaymentProvider {
  private readonly stripe: Stripe;

  constructor(private readonly settings: StripeSettings) {
    this.stripe = new Stripe(settings.secretKey, {
      ...settings.api,
      // A retried create carries the first attempt's Idempotency-Key (the package adds one), so a
      // lost answer does not make a second session.
      maxNetworkRetries: 2,
      // The buyer waits on this call: a provider that does not answer in 20 s is a 502.
      timeout: 20_000,
      telemetry: false,
    });
  }

  async createCheckout(request: CheckoutRequest): Promise<CheckoutSession> {
    const bonus = request.creditsMicro > request.credits * 1_000_000;
    try {
      const session = await this.stripe.checkout.sessions.create({
        mode: 'payment',
        client_reference_id: request.accountId,
        metadata: checkoutMetadata(request.accountId, request.creditsMicro),
        line_items: [
          {
            quantity: 1,
            price_data: {
              currency: 'usd',
              unit_amount: request.amountCents,
              product_data: {
                name: creditsLabel(request.creditsMicro / 1_000_000),
                ...(bonus ? { description: `${creditsLabel(request.credits)} with the member bonus` } : {}),
              },
            },
          },
        ],
        success_url: request.successUrl,
        cancel_url: request.cancelUrl,
      });
      if (!session.url) throw new Error('the session came back without a url');
      return { id: session.id, url: session.url };
    } catch (err) {
      throw new DomainError('upstream_error', 'The payment provider did not create the checkout; nothing was charged. Try again shortly.', {
        code: 'payment_provider_error',
        cause: err,
      });
    }
  }

  verifyEvent(rawBody: Buffer, signature: string | undefined, nowMs: number): PaymentEvent {
    if (!signature) throw invalidRequest('The request has no Stripe-Signature header.', null, 'signature_missing');
    let event: Stripe.Event;
    try {
      event = Stripe.webhooks.constructEvent(rawBody, signature, this.settings.webhookSecret, SIGNATURE_TOLERANCE_SECONDS, undefined, nowMs);
    } catch (err) {
      const late = /tolerance/i.test((err as Error).message);
      throw invalidRequest(
        late
          ? `The event was signed more than ${SIGNATURE_TOLERANCE_SECONDS} seconds ago.`
          : "The Stripe-Signature header does not match the body under this endpoint's signing secret.",
        null,
        late ? 'signature_expired' : 'signature_invalid',
      );
    }
    return paymentEventOf(event);
  }
}

/** STRIPE_API_BASE as the package takes it: host, port and protocol of an http(s) origin. */
export function stripeApiOf(base: string): StripeSettings['api'] {
  const url = new URL(base);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: url.port ? Number(url.port) : protocol === 'http' ? 80 : 443, protocol };
}
