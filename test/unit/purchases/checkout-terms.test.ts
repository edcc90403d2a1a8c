import { checkoutTermProblems, grantedMicro, priceCents } from '../../../src/domain/purchases/checkout-terms';
import { refundDueMicro, refundedStatus } from '../../../src/domain/purchases/purchase';

test('the price is credits × the price per credit, in cents, half a cent up', () => {
  expect(priceCents({ usdPerCreditMicro: 10_000 }, 100)).toBe(100);
  expect(priceCents({ usdPerCreditMicro: 12_000 }, 333)).toBe(400); // 3.996 USD
  expect(priceCents({ usdPerCreditMicro: 15_000 }, 3)).toBe(5); // 4.5 cents
  expect(priceCents({ usdPerCreditMicro: 15_000 }, 1_000_000_000)).toBe(1_500_000_000);
});

test("a member's purchase grants 1.55 times the credits, rounded down to micro-credits; no float error", () => {
  expect(grantedMicro(1000, false)).toBe(1_000_000_000);
  expect(grantedMicro(1000, true)).toBe(1_550_000_000);
  expect(grantedMicro(333, true)).toBe(516_150_000);
  expect(grantedMicro(1_000_000_000, true)).toBe(1_550_000_000_000_000);
});

test('refunds take back their share of the credits, rounded down, never more than all of them', () => {
  expect(refundDueMicro(100_000_000, 40, 100)).toBe(40_000_000);
  expect(refundDueMicro(1_550_000_000, 1, 1000)).toBe(1_550_000);
  expect(refundDueMicro(100_000_000, 1, 3)).toBe(33_333_333);
  expect(refundDueMicro(100_000_000, 500, 100)).toBe(100_000_000);
  expect(refundDueMicro(1_550_000_000_000_000, 99_999_999, 99_999_999)).toBe(1_550_000_000_000_000);
  expect([refundedStatus(40, 100), refundedStatus(100, 100)]).toEqual(['partially_refunded', 'refunded']);
});

test('terms Stripe would refuse are named by their variable', () => {
  expect(checkoutTermProblems({ usdPerCreditMicro: 10_000, min: 50, max: 1000 })).toEqual([]);
  expect(checkoutTermProblems({ usdPerCreditMicro: 10_000, min: 49, max: 1000 })).toEqual([expect.stringMatching(/^CREDIT_PURCHASE_MIN: /)]);
  expect(checkoutTermProblems({ usdPerCreditMicro: 10_000, min: 2000, max: 1000 })).toEqual([expect.stringMatching(/^CREDIT_PURCHASE_MIN: /)]);
  expect(checkoutTermProblems({ usdPerCreditMicro: 1_000_000, min: 1, max: 1_000_000 })).toEqual([expect.stringMatching(/^CREDIT_PURCHASE_MAX: /)]);
});
