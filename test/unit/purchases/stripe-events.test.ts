import { paymentEventOf } from '../../../src/infra/payments/stripe-events';

const session = (over: Record<string, unknown> = {}) => ({
  id: 'cs_test_1',
  object: 'checkout.session',
  payment_status: 'paid',
  amount_total: 1000,
  client_reference_id: 'acct_abc',
  payment_intent: 'pi_1',
  metadata: { svc_account: 'acct_abc', svc_credits_micro: '1550000000' },
  ...over,
});
const event = (type: string, object: unknown) => ({ id: 'evt_1', type, data: { object } });

test('a paid session is read with what it grants, its account and its payment; an expanded payment intent too', () => {
  const paid = { kind: 'paid', sessionId: 'cs_test_1', accountId: 'acct_abc', creditsMicro: 1_550_000_000, amountCents: 1000, paymentIntent: 'pi_1' };
  expect(paymentEventOf(event('checkout.session.completed', session()))).toEqual({ ...paid, type: 'checkout.session.completed' });
  expect(paymentEventOf(event('checkout.session.async_payment_succeeded', session({ payment_intent: { id: 'pi_1', object: 'payment_intent' } })))).toEqual({
    ...paid,
    type: 'checkout.session.async_payment_succeeded',
  });
});

test('sessions not made here, forged or unpaid are ignored, saying why', () => {
  const why = (object: unknown) => {
    const e = paymentEventOf(event('checkout.session.completed', object));
    return e.kind === 'ignored' ? e.why : e.kind;
  };
  expect(why(session({ payment_status: 'unpaid' }))).toBe("the session's payment is unpaid");
  expect(why(session({ metadata: {} }))).toBe('the session was not made by this service');
  expect(why(session({ metadata: { svc_account: 'acct_abc', svc_credits_micro: '1e9' } }))).toBe('the session was not made by this service');
  expect(why(session({ metadata: { svc_account: 'acct_abc', svc_credits_micro: '-5' } }))).toBe('the session was not made by this service');
  expect(why(session({ client_reference_id: 'acct_other' }))).toBe("the session's client_reference_id is not its account");
  expect(why(session({ amount_total: null }))).toBe('the session has no amount');
  expect(why(null)).toBe('the event carries no session id');
});

test('expiry, a failed delayed payment and refunds; any other type is ignored', () => {
  expect(paymentEventOf(event('checkout.session.expired', session()))).toEqual({
    kind: 'closed',
    type: 'checkout.session.expired',
    sessionId: 'cs_test_1',
    status: 'expired',
  });
  expect(paymentEventOf(event('checkout.session.async_payment_failed', session()))).toMatchObject({ kind: 'closed', status: 'failed' });
  expect(paymentEventOf(event('charge.refunded', { id: 'ch_1', amount: 1000, amount_refunded: 250, payment_intent: 'pi_1' }))).toEqual({
    kind: 'refunded',
    type: 'charge.refunded',
    paymentIntent: 'pi_1',
    amountCents: 1000,
    refundedCents: 250,
  });
  expect(paymentEventOf(event('charge.refunded', { id: 'ch_1', amount: 1000, amount_refunded: 250, payment_intent: null })).kind).toBe('ignored');
  expect(paymentEventOf(event('invoice.paid', {}))).toEqual({ kind: 'ignored', type: 'invoice.paid', why: 'not an event purchases act on' });
  expect(paymentEventOf({}).type).toBe('unknown');
});
