/**
 * What a purchase of credits costs and gives, decided here once: the price of `credits` in US
 * cents, and the credits the purchase grants (a member's 1.55 times as many for the same price).
 * All in integers: the price per credit is kept in micro-dollars, credits asked for are whole, and
 * what is granted is micro-credits, rounded down.
 */
import { MEMBER_CREDIT_FACTOR, MEMBER_CREDIT_FACTOR_PERCENT, MICRO_PER_CREDIT } from '../shared/money';

export interface CheckoutTerms {
  /** CREDIT_PRICE_USD, in micro-dollars (0.01 USD is 10,000). */
  usdPerCreditMicro: number;
  /** CREDIT_PURCHASE_MIN and CREDIT_PURCHASE_MAX: whole credits a checkout may ask for. */
  min: number;
  max: number;
}

/** Stripe's smallest USD charge (50 cents) and its largest for one Checkout payment. */
export const STRIPE_MIN_CENTS = 50;
export const STRIPE_MAX_CENTS = 99_999_999;

const MICRO_USD_PER_CENT = 10_000;

/** The price of `credits` in US cents, half a cent rounded up. */
export function priceCents(terms: Pick<CheckoutTerms, 'usdPerCreditMicro'>, credits: number): number {
  return Math.floor((credits * terms.usdPerCreditMicro + MICRO_USD_PER_CENT / 2) / MICRO_USD_PER_CENT);
}

/** The micro-credits a purchase of `credits` grants: a member's are 1.55 times as many, rounded down. */
export function grantedMicro(credits: number, member: boolean): number {
  const micro = credits * MICRO_PER_CREDIT;
  return member ? Math.floor((micro * MEMBER_CREDIT_FACTOR_PERCENT) / 100) : micro;
}

/** What the console's Buy form shows: the price, the member multiplier and the bounds. */
export interface CreditPrice {
  usdPerCredit: number;
  memberBonus: number;
  min: number;
  max: number;
}

export const creditPriceOf = (terms: CheckoutTerms): CreditPrice => ({
  usdPerCredit: terms.usdPerCreditMicro / 1_000_000,
  memberBonus: MEMBER_CREDIT_FACTOR,
  min: terms.min,
  max: terms.max,
});

/**
 * What is wrong with the terms, each line naming its variable (config.ts stops start-up on any):
 * bounds out of order, or a purchase Stripe would refuse to charge (below 50 cents, above its
 * largest amount).
 */
export function checkoutTermProblems(terms: CheckoutTerms): string[] {
  const problems: string[] = [];
  if (terms.min > terms.max) problems.push(`CREDIT_PURCHASE_MIN: must not be above CREDIT_PURCHASE_MAX (${terms.max})`);
  if (priceCents(terms, terms.min) < STRIPE_MIN_CENTS) {
    problems.push(`CREDIT_PURCHASE_MIN: ${terms.min} credits cost less than the 0.50 USD Stripe charges at least`);
  }
  if (priceCents(terms, terms.max) > STRIPE_MAX_CENTS) {
    problems.push(`CREDIT_PURCHASE_MAX: ${terms.max} credits cost more than the 999,999.99 USD one Checkout payment may be`);
  }
  return problems;
}
