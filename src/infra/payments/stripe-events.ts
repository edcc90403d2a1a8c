/**
 * A verified Stripe event read into what it means for a purchase (domain/purchases/payment-provider.ts),
 * and the metadata a Checkout Session is made with, both here: this file is the one place that
 * knows how a session says whose purchase it is and what it grants. Fields are read as data, not
 * trusted by type: an endpoint may be set to another API version, and a Stripe account may make
 * sessions of other products, which are ignored.
 */
import type { PaymentEvent } from '../../domain/purchases/payment-provider';

/** The session's metadata: the account it is for and the micro-credits it grants, fixed by the server. */
export const METADATA_ACCOUNT = 'svc_account';
export const METADATA_CREDITS = 'svc_credits_micro';

export const checkoutMetadata = (accountId: string, creditsMicro: number): Record<string, string> => ({
  [METADATA_ACCOUNT]: accountId,
  [METADATA_CREDITS]: String(creditsMicro),
});

type Fields = Record<string, unknown>;

const fieldsOf = (v: unknown): Fields => (v !== null && typeof v === 'object' ? (v as Fields) : {});
const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const count = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null);
/** An id Stripe sends as a string or, expanded, as the object that has it. */
const idOf = (v: unknown): string | null => text(v) ?? text(fieldsOf(v).id);

const ACCOUNT_ID = /^acct_[A-Za-z0-9]{1,64}$/;
const MICRO = /^[1-9]\d{0,15}$/;

function paidSession(type: string, session: Fields): PaymentEvent {
  const ignored = (why: string): PaymentEvent => ({ kind: 'ignored', type, why });
  const sessionId = text(session.id);
  if (!sessionId) return ignored('the event carries no session id');
  const metadata = fieldsOf(session.metadata);
  const accountId = text(metadata[METADATA_ACCOUNT]);
  const credits = text(metadata[METADATA_CREDITS]);
  if (!accountId || !ACCOUNT_ID.test(accountId) || !credits || !MICRO.test(credits)) return ignored('the session was not made by this service');
  if (session.client_reference_id !== accountId) return ignored("the session's client_reference_id is not its account");
  if (session.payment_status !== 'paid') return ignored(`the session's payment is ${String(session.payment_status)}`);
  const amountCents = count(session.amount_total);
  if (!amountCents) return ignored('the session has no amount');
  return { kind: 'paid', type, sessionId, accountId, creditsMicro: Number(credits), amountCents, paymentIntent: idOf(session.payment_intent) };
}

export function paymentEventOf(event: { type?: unknown; data?: unknown }): PaymentEvent {
  const type = typeof event.type === 'string' ? event.type : 'unknown';
  const object = fieldsOf(fieldsOf(event.data).object);
  switch (type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
      return paidSession(type, object);
    case 'checkout.session.expired':
    case 'checkout.session.async_payment_failed': {
      const sessionId = text(object.id);
      if (!sessionId) return { kind: 'ignored', type, why: 'the event carries no session id' };
      return { kind: 'closed', type, sessionId, status: type === 'checkout.session.expired' ? 'expired' : 'failed' };
    }
    case 'charge.refunded': {
      const paymentIntent = idOf(object.payment_intent);
      const amountCents = count(object.amount);
      const refundedCents = count(object.amount_refunded);
      if (!paymentIntent || !amountCents || refundedCents === null) return { kind: 'ignored', type, why: 'the charge has no payment intent or amounts' };
      return { kind: 'refunded', type, paymentIntent, amountCents, refundedCents };
    }
    default:
      return { kind: 'ignored', type, why: 'not an event purchases act on' };
  }
}
