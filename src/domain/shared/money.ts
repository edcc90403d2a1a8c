/** Credits are stored as integer micro-credits so sums are exact. */
export const MICRO_PER_CREDIT = 1_000_000;

/**
 * Members get ~55% more credits per currency unit: a purchase gives them 1.55 times the credits,
 * so a credit costs them 1/1.55 as much. As a fraction (155/100) for exact integer arithmetic.
 */
export const MEMBER_CREDIT_FACTOR = 1.55;
export const MEMBER_CREDIT_FACTOR_PERCENT = 155;

export function creditsToMicro(credits: number): number {
  return Math.round(credits * MICRO_PER_CREDIT);
}

export function microToCredits(micro: number | string | bigint): number {
  return Number(micro) / MICRO_PER_CREDIT;
}

/** Cost of a chat call: tokens × credits per 10k tokens, exact in micro-credits. */
export function chatCostMicro(tokens: number, creditsPer10kTokens: number): number {
  return Math.round((tokens * creditsPer10kTokens * MICRO_PER_CREDIT) / 10_000);
}
