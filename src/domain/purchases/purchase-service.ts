import { z } from 'zod';
import { DomainError, notFound } from '../errors/domain-error';
import type { LeasedCredits, AccountService } from '../accounts/account-service';
import type { Ledger } from '../credits/ledger';
import type { Clock } from '../ports/clock';
import type { AccountEventBus } from '../events/account-events';
import type { WebhookRepository } from '../webhooks/webhook-repository';
import { microToCredits } from '../shared/money';
import { parseInput } from '../shared/validate';
import { creditPriceOf, grantedMicro, priceCents, type CheckoutTerms, type CreditPrice } from './checkout-terms';
import type { CheckoutSession, PaymentEvent, PaymentProvider } from './payment-provider';
import { PURCHASE_ID, purchasePage, refundDueMicro, refundedStatus, type Purchase, type PurchasePage } from './purchase';
import type { PurchaseRepository } from './purchase-repository';

/** How long a refund waits for the account's credit leases to come back before it takes what the balance holds. */
const LEASE_CALL_BACK_MS = 3_000;

export const PURCHASE_REASON = 'credit purchase';
export const REFUND_REASON = 'credit purchase refunded';

/** What a webhook delivery did, for the log line. */
export interface PaymentOutcome {
  type: string;
  outcome: 'granted' | 'granted_before' | 'closed' | 'taken_back' | 'ignored';
  purchaseId?: string;
  accountId?: string;
  /** Micro-credits granted, or taken back by a refund. */
  creditsMicro?: number;
  /** A refund's share that the balance could not give back (the credits were spent). */
  shortfallMicro?: number;
  why?: string;
}

/** What a checkout of `credits` costs the account and grants it, as the server charges and grants it. */
export interface CheckoutQuote {
  credits: number;
  amountCents: number;
  /** What the purchase grants: a member's 1.55 times `credits`, rounded down to micro-credits. */
  creditsMicro: number;
  member: boolean;
}

export interface PurchaseDeps {
  repository: PurchaseRepository;
  /** Unset (no STRIPE_SECRET_KEY): checkout and the webhook answer 404. */
  provider?: PaymentProvider;
  terms: CheckoutTerms;
  accounts: Pick<AccountService, 'get'>;
  ledger: Pick<Ledger, 'grant'>;
  webhooks: Pick<WebhookRepository, 'recordAccountEvent'>;
  /** Where a purchase's change is announced once committed (the owner's live views). */
  events: Pick<AccountEventBus, 'publish'>;
  leases?: LeasedCredits;
  clock: Clock;
  /** The console's address (`…/console/`), where Checkout sends the buyer back. */
  consoleUrl: () => string;
}

const checkoutDisabled = () => new DomainError('not_found_error', 'Buying credits is not enabled on this service.', { code: 'checkout_disabled' });

/**
 * Buying credits: a Checkout Session for a price, its purchase recorded `pending`, and the
 * provider's events acted on exactly once: a paid session grants what its purchase was made to
 * grant (the grant, the purchase's move to `completed` and its `purchase.completed` event in one
 * transaction, the purchase row held), a refund takes back its share of the credits as far as
 * the balance goes, recording what it could not.
 */
export class PurchaseService {
  private readonly checkoutInput: z.ZodType<{ credits: number }>;

  constructor(private readonly deps: PurchaseDeps) {
    const { min, max } = deps.terms;
    const rule = `must be a whole number of credits from ${min} to ${max}`;
    this.checkoutInput = z.strictObject({
      credits: z.number({ error: rule }).refine((n) => Number.isInteger(n) && n >= min && n <= max, rule),
    });
  }

  /** The Buy form's terms; null when buying is off. */
  creditPrice(): CreditPrice | null {
    return this.deps.provider ? creditPriceOf(this.deps.terms) : null;
  }

  /** `{ credits }`: what a checkout of them would charge and grant the account, refused as checkout refuses it. */
  async quote(accountId: string, input: unknown): Promise<CheckoutQuote> {
    this.enabled();
    const { credits } = parseInput(this.checkoutInput, input);
    const { member } = await this.deps.accounts.get(accountId);
    return { credits, amountCents: priceCents(this.deps.terms, credits), creditsMicro: grantedMicro(credits, member), member };
  }

  /** `{ credits }`: a Checkout Session priced by the server, granting a member 1.55 times the credits. */
  async checkout(accountId: string, input: unknown): Promise<CheckoutSession> {
    const provider = this.enabled();
    const { credits, amountCents, creditsMicro } = await this.quote(accountId, input);
    const back = this.deps.consoleUrl();
    const session = await provider.createCheckout({
      accountId,
      credits,
      creditsMicro,
      amountCents,
      successUrl: `${back}#/purchases?session={CHECKOUT_SESSION_ID}`,
      cancelUrl: `${back}#/purchases?cancelled=1`,
    });
    // A failure here answers 503 and the URL is never handed out; the session expires unpaid.
    await this.deps.repository.recordPending({ id: session.id, accountId, creditsMicro, amountCents });
    return session;
  }

  /** `{ first?, after? }`: the account's purchases, newest first. */
  async list(accountId: string, input: unknown): Promise<PurchasePage> {
    const page = purchasePage(input);
    const rows = await this.deps.repository.list(accountId, { first: page.first + 1, after: page.after });
    const purchases = rows.slice(0, page.first);
    return { purchases, hasNextPage: rows.length > page.first, endCursor: purchases.at(-1)?.id ?? null };
  }

  /** The account's purchase `id`; another account's, or none, is a not_found_error. */
  async get(accountId: string, id: string): Promise<Purchase> {
    const purchase = PURCHASE_ID.test(id) ? await this.deps.repository.find(accountId, id) : undefined;
    if (!purchase) throw notFound('No purchase of this account has this id.', 'purchase_not_found', ['id']);
    return purchase;
  }

  /** A webhook delivery: its raw body and Stripe-Signature header, verified before anything is read. */
  async receive(rawBody: Buffer, signature: string | undefined): Promise<PaymentOutcome> {
    const event = this.enabled().verifyEvent(rawBody, signature, this.deps.clock.now());
    switch (event.kind) {
      case 'paid':
        return this.complete(event);
      case 'closed': {
        const accountId = await this.deps.repository.close(event.sessionId, event.status);
        if (!accountId) return { type: event.type, outcome: 'ignored', purchaseId: event.sessionId, why: 'no pending purchase has this session' };
        await this.announce(accountId, event.sessionId);
        return { type: event.type, outcome: 'closed', purchaseId: event.sessionId, accountId };
      }
      case 'refunded':
        return this.takeBack(event);
      case 'ignored':
        return { type: event.type, outcome: 'ignored', why: event.why };
    }
  }

  /** After the commit: the owner's views show the purchase's new state and the balance. */
  private announce(accountId: string, purchaseId: string): Promise<void> {
    return this.deps.events.publish({ accountId, purchaseId });
  }

  private enabled(): PaymentProvider {
    if (!this.deps.provider) throw checkoutDisabled();
    return this.deps.provider;
  }

  private async complete(event: Extract<PaymentEvent, { kind: 'paid' }>): Promise<PaymentOutcome> {
    const { sessionId: id, accountId } = event;
    const granted = await this.deps.repository.transaction(async (tx) => {
      const claim = await this.deps.repository.claimCompletion(tx, {
        id,
        accountId,
        creditsMicro: event.creditsMicro,
        amountCents: event.amountCents,
        paymentIntent: event.paymentIntent,
      });
      if (!claim) return null;
      await this.deps.ledger.grant(tx, { accountId, amountMicro: claim.creditsMicro, reason: PURCHASE_REASON, reference: id });
      await this.deps.webhooks.recordAccountEvent(tx, {
        accountId,
        type: 'purchase.completed',
        occurrence: id,
        data: { purchaseId: id, credits: microToCredits(claim.creditsMicro), amountUsd: claim.amountCents / 100 },
      });
      return claim;
    });
    if (!granted) return { type: event.type, outcome: 'granted_before', purchaseId: id, accountId };
    await this.announce(accountId, id);
    return { type: event.type, outcome: 'granted', purchaseId: id, accountId, creditsMicro: granted.creditsMicro };
  }

  /**
   * A charge's refunds take back the same share of its purchase's credits, in all: each event
   * takes what the total refunded so far adds to what was taken (a replay or an older event adds
   * nothing), never below zero; what the balance could not give is the purchase's shortfall.
   */
  private async takeBack(event: Extract<PaymentEvent, { kind: 'refunded' }>): Promise<PaymentOutcome> {
    const ignored = (why: string): PaymentOutcome => ({ type: event.type, outcome: 'ignored', why });
    const accountId = await this.deps.repository.accountOfPayment(event.paymentIntent);
    if (!accountId) return ignored('no purchase was paid by this payment');
    // The credits the account's leases hold unspent come back first: what is spent is what a refund cannot take.
    await this.deps.leases?.callBack(accountId, LEASE_CALL_BACK_MS);
    const outcome = await this.deps.repository.transaction(async (tx): Promise<PaymentOutcome> => {
      const state = await this.deps.repository.lockForRefund(tx, event.paymentIntent);
      if (!state) return ignored('no purchase was paid by this payment');
      const before = state.takenBackMicro + state.shortfallMicro;
      const deltaMicro = refundDueMicro(state.creditsMicro, event.refundedCents, event.amountCents) - before;
      const refundedCents = Math.max(state.refundedCents, event.refundedCents);
      let takenMicro = 0;
      if (deltaMicro > 0) {
        takenMicro = -(await this.deps.ledger.grant(tx, { accountId: state.accountId, amountMicro: -deltaMicro, reason: REFUND_REASON, reference: state.id }));
      }
      const shortfallMicro = Math.max(deltaMicro, 0) - takenMicro;
      await this.deps.repository.recordRefund(tx, {
        id: state.id,
        refundedCents,
        takenBackMicro: state.takenBackMicro + takenMicro,
        shortfallMicro: state.shortfallMicro + shortfallMicro,
        status: refundedStatus(refundedCents, event.amountCents),
      });
      return { type: event.type, outcome: 'taken_back', purchaseId: state.id, accountId: state.accountId, creditsMicro: takenMicro, shortfallMicro };
    });
    if (outcome.outcome === 'taken_back') await this.announce(outcome.accountId!, outcome.purchaseId!);
    return outcome;
  }
}
