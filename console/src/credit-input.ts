/**
 * Credit amounts typed into the console (a daily cap, a week or month budget, a low-balance
 * threshold), read as strictly as the gateway reads them: plain decimal digits with up to 6
 * decimals, more than 0, at most 1,000,000,000. Number() alone would also take 0x10 (16), 1e3,
 * 0b1 and Infinity, turn 400 digits into Infinity (which JSON sends as null, "none") and round a
 * seventh decimal away before the gateway could refuse it.
 */
const AMOUNT = /^(?:\d{1,10}(?:\.\d{0,6})?|\.\d{1,6})$/;
const MAX_CREDITS = 1e9;

/** '' → null (none); otherwise a number of credits the gateway takes as it is, or a message naming `what` ("The daily cap"). */
export function parseCredits(text: string, what: string): { credits: number | null } | { error: string } {
  const t = text.trim();
  if (t === '') return { credits: null };
  const credits = AMOUNT.test(t) ? Number(t) : NaN;
  if (!(credits > 0 && credits <= MAX_CREDITS)) {
    return { error: `${what} is a number of credits more than 0 and at most 1,000,000,000, with up to 6 decimal places (e.g. 25 or 2.5); empty for none.` };
  }
  return { credits };
}

/** A stored amount as the field shows it: '' for none. */
export const creditsText = (n: number | null | undefined): string => (n === null || n === undefined ? '' : String(n));
