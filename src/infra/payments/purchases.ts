import type { Config } from '../../config';
import type { Database } from '../../domain/ports/database';
import { PurchaseService, type PurchaseDeps } from '../../domain/purchases/purchase-service';
import type { PaymentProvider } from '../../domain/purchases/payment-provider';
import { SqlPurchaseRepository } from '../db/repositories/sql-purchases';

/**
 * The purchases as the configuration makes them: over `purchases` in the database, with Stripe
 * when STRIPE_SECRET_KEY is set (at STRIPE_API_BASE when that is), and without a provider (buying
 * off, past purchases still listed) when it is not.
 */
export async function openPurchases(
  config: Pick<Config, 'stripe' | 'checkout'>,
  db: Database,
  deps: Omit<PurchaseDeps, 'repository' | 'provider' | 'terms'>,
): Promise<PurchaseService> {
  const stripe = config.stripe;
  let provider: PaymentProvider | undefined;
  if (stripe) {
    // Loaded only when STRIPE_SECRET_KEY is set: the `stripe` package takes a twentieth of a second to load.
    const { StripePayments, stripeApiOf } = await import('./stripe-payments.js');
    provider = new StripePayments({
      secretKey: stripe.secretKey,
      webhookSecret: stripe.webhookSecret,
      api: stripe.apiBase ? stripeApiOf(stripe.apiBase) : undefined,
    });
  }
  return new PurchaseService({ ...deps, repository: new SqlPurchaseRepository(db), provider, terms: config.checkout });
}
