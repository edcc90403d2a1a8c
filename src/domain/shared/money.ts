/** Credits are stored as integer micro-credits so sums are exact. */
export const MICRO_PER_CREDIT = 1_000_000;

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
