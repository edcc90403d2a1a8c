import express, { Router } from 'express';
import { DomainError } from '../../domain/errors/domain-error';
import type { Logger } from '../../infra/observability/logger';
import type { Purchase } from '../../domain/purchases/purchase';
import type { PaymentOutcome, PurchaseService } from '../../domain/purchases/purchase-service';
import { microToCredits } from '../../domain/shared/money';
import { unixSeconds } from '../../domain/shared/time';
import { accountIdOf } from '../auth';
import { jsonBody } from '../json-body';

export const purchaseRecord = (p: Purchase) => ({
  id: p.id,
  credits: microToCredits(p.creditsMicro),
  amountUsd: p.amountCents / 100,
  status: p.status,
  created: unixSeconds(p.created),
});

/** POST /account/checkout and GET /account/purchases (ID-token authenticated by the caller). */
export function purchaseRoutes(purchases: PurchaseService): Router {
  const r = Router();

  r.post('/account/checkout', jsonBody(), async (req, res) => {
    const session = await purchases.checkout(accountIdOf(res), req.body);
    res.json({ id: session.id, url: session.url });
  });

  r.get('/account/purchases', async (req, res) => {
    const page = await purchases.list(accountIdOf(res), { ...req.query });
    res.json({ object: 'list', data: page.purchases.map(purchaseRecord), hasMore: page.hasNextPage, nextCursor: page.hasNextPage ? page.endCursor : null });
  });

  return r;
}

/** Stripe's events are small; a body past this is not one. */
const EVENT_BODY_LIMIT = 1024 * 1024;

/**
 * POST /webhooks/stripe, open (the signature is the credential): the raw bytes, as Stripe signed
 * them, go to the purchases unparsed. Anything but a 2xx makes Stripe send the event again later:
 * a refused signature is a 400 (nothing done), a database that does not answer a 503.
 */
export function stripeWebhookRoutes(purchases: PurchaseService, logger: Logger): Router {
  const r = Router();
  const raw = express.raw({ type: () => true, limit: EVENT_BODY_LIMIT });

  r.post('/webhooks/stripe', raw, async (req, res) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    let outcome: PaymentOutcome;
    try {
      outcome = await purchases.receive(body, req.get('stripe-signature'));
    } catch (err) {
      // A refusal is the sender's (a wrong signing secret, a replay, a forgery): the operator hears of it.
      if (err instanceof DomainError && err.status === 400) logger.warn({ code: err.code }, 'stripe webhook refused');
      throw err;
    }
    logger.info(outcome, 'stripe event');
    res.json({ received: true });
  });

  return r;
}
