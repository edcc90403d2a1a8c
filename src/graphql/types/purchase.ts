import { Field, Float, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { CreditPrice } from '../../domain/purchases/checkout-terms';
import type { CheckoutSession } from '../../domain/purchases/payment-provider';
import type { Purchase, PurchasePage } from '../../domain/purchases/purchase';
import type { CheckoutQuote } from '../../domain/purchases/purchase-service';
import { microToCredits } from '../../domain/shared/money';
import { DateTimeScalar } from '../scalars';
import { PageInfo } from './video-job';

/** GraphQL names are upper case; the values are REST's `status` values. */
export enum PurchaseStatusValue {
  PENDING = 'pending',
  COMPLETED = 'completed',
  PARTIALLY_REFUNDED = 'partially_refunded',
  REFUNDED = 'refunded',
  EXPIRED = 'expired',
  FAILED = 'failed',
}
registerEnumType(PurchaseStatusValue, { name: 'PurchaseStatus' });

@ObjectType('Purchase', { description: 'A purchase of credits: one Stripe Checkout Session, whose id it has.' })
export class PurchaseType {
  @Field(() => ID) id!: string;
  @Field(() => Float, { description: "Credits the purchase grants once paid (a member's bonus included)." }) credits!: number;
  @Field(() => Float) amountUsd!: number;
  @Field(() => PurchaseStatusValue) status!: PurchaseStatusValue;
  @Field(() => DateTimeScalar) created!: Date;
}

@ObjectType('PurchaseConnection', { description: 'Newest first; pass pageInfo.endCursor as `after` for the next page.' })
export class PurchaseConnection {
  @Field(() => [PurchaseType]) nodes!: PurchaseType[];
  @Field(() => PageInfo) pageInfo!: PageInfo;
}

export const toPurchaseType = (x: Purchase): PurchaseType => ({
  id: x.id,
  credits: microToCredits(x.creditsMicro),
  amountUsd: x.amountCents / 100,
  status: x.status as PurchaseStatusValue,
  created: x.created,
});

export const toPurchaseConnection = (p: PurchasePage): PurchaseConnection => ({
  nodes: p.purchases.map(toPurchaseType),
  pageInfo: { hasNextPage: p.hasNextPage, endCursor: p.endCursor },
});

@ObjectType('CheckoutSession', { description: "Stripe Checkout's page for one purchase: send the buyer to `url`." })
export class CheckoutSessionType {
  @Field(() => ID, { description: 'The purchase id, as `purchases` lists it.' }) id!: string;
  @Field(() => String) url!: string;
}

export const toCheckoutSessionType = (s: CheckoutSession): CheckoutSessionType => ({ id: s.id, url: s.url });

@ObjectType('CreditPrice', { description: 'What credits cost at checkout.' })
export class CreditPriceType {
  @Field(() => Float, { description: 'USD per credit.' }) usdPerCredit!: number;
  @Field(() => Float, { description: 'A member account receives this many times the credits for the same price.' }) memberBonus!: number;
  @Field(() => Int, { description: 'The fewest whole credits one checkout may buy.' }) min!: number;
  @Field(() => Int, { description: 'The most whole credits one checkout may buy.' }) max!: number;
}

export const toCreditPriceType = (p: CreditPrice): CreditPriceType => ({ ...p });

@ObjectType('CreditQuote', { description: 'What a checkout of `credits` would charge and grant the caller, as createCheckout charges and grants it.' })
export class CreditQuoteType {
  @Field(() => Int, { description: 'Whole credits asked for.' }) credits!: number;
  @Field(() => Float, { description: 'The price in USD, to the cent.' }) amountUsd!: number;
  @Field(() => Float, { description: "Credits the purchase grants once paid: a member's `memberBonus` times `credits`." }) creditsGranted!: number;
  @Field(() => Boolean, { description: 'Whether the account is a member (and so receives the bonus).' }) member!: boolean;
}

export const toCreditQuoteType = (q: CheckoutQuote): CreditQuoteType => ({
  credits: q.credits,
  amountUsd: q.amountCents / 100,
  creditsGranted: microToCredits(q.creditsMicro),
  member: q.member,
});
