import { useEffect, useRef, useState } from 'preact/hooks';
import { describeError, execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import { CreateCheckoutMutation, CreditQuoteQuery } from '../api/purchase-operations';
import type { CreditPriceQuery, CreditQuoteQuery as QuoteResult } from '../gql/graphql';
import { ErrorNote, credits, useOneAtATime } from '../ui';

type Price = NonNullable<CreditPriceQuery['creditPrice']>;
type Quote = QuoteResult['creditQuote'];

/** A price in US dollars with its cents: "1,234.50 USD". */
export const usd = (amount: number): string => `${amount.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} USD`;

/** Digits only, as many as a GraphQL Int holds: the gateway judges the bounds. */
const WHOLE = /^\d{1,9}$/;

/**
 * Buy credits: the price and what the account receives are the gateway's quote for the number
 * typed (creditQuote: its rounding, its member bonus), shown before anything is paid; Buy makes
 * the Checkout Session and goes to Stripe's page. Only the quote of the number shown counts: an
 * answer for an earlier keystroke is dropped.
 */
export function BuyForm({ token, price }: { token: Bearer; price: Price }) {
  const [text, setText] = useState(String(price.min));
  const [quote, setQuote] = useState<Quote | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [leaving, setLeaving] = useState(false);
  const asked = useRef(0);
  const { busy, once } = useOneAtATime();

  useEffect(() => {
    const n = ++asked.current;
    setQuote(null);
    const t = text.trim();
    if (!WHOLE.test(t)) {
      setProblem(`Credits: a whole number from ${price.min.toLocaleString('en-US')} to ${price.max.toLocaleString('en-US')}.`);
      return;
    }
    setProblem(null);
    execute(token, CreditQuoteQuery, { credits: Number(t) }).then(
      (d) => n === asked.current && setQuote(d.creditQuote),
      (err) => n === asked.current && setProblem(describeError(err)),
    );
  }, [text, token]);

  const buy = (e: Event) => {
    e.preventDefault();
    if (!quote) return;
    void once(async () => {
      setError(null);
      try {
        const { createCheckout } = await execute(token, CreateCheckoutMutation, { credits: quote.credits });
        // Stripe's page; it comes back to #/purchases?session=… once paid, or ?cancelled=1.
        setLeaving(true);
        location.assign(createCheckout.url);
      } catch (err) {
        setError(describeError(err));
      }
    });
  };

  return (
    <form class="grid" aria-label="Buy credits" onSubmit={buy}>
      <div class="field">
        <label for="buy-credits">Credits to buy</label>
        <input id="buy-credits" inputMode="numeric" value={text} aria-describedby="buy-quote buy-terms" onInput={(e) => setText(e.currentTarget.value)} />
        <p class="hint" id="buy-terms">
          {price.usdPerCredit.toLocaleString('en-US', { maximumFractionDigits: 6 })} USD per credit, {price.min.toLocaleString('en-US')} to{' '}
          {price.max.toLocaleString('en-US')} credits per purchase. Members receive {price.memberBonus} times the credits for the same price.
        </p>
      </div>
      <output id="buy-quote" class="quote-box" aria-live="polite" for="buy-credits">
        {problem && <span class="error">{problem}</span>}
        {!problem && !quote && <span class="hint">Pricing…</span>}
        {quote && (
          <>
            <span class="price" data-testid="buy-price">
              You pay {usd(quote.amountUsd)}
            </span>
            <span data-testid="buy-receive">
              You receive {credits(quote.creditsGranted)}
              {quote.member && ` (member bonus: ${price.memberBonus} × ${quote.credits.toLocaleString('en-US')})`}.
            </span>
          </>
        )}
      </output>
      <div class="row wide">
        <button type="submit" disabled={!quote || busy || leaving}>
          {leaving ? 'Opening Stripe Checkout…' : 'Buy credits'}
        </button>
        <span class="hint">Payment is taken on Stripe's page; you come back here once it is done.</span>
      </div>
      <ErrorNote message={error} />
    </form>
  );
}
