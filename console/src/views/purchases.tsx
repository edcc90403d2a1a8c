import { useEffect, useRef, useState } from 'preact/hooks';
import type { Client } from 'graphql-ws';
import { describeError, execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import { subscribe } from '../api/live';
import { AccountQuery } from '../api/operations';
import { AccountUpdatedSubscription, CreditPriceQuery, PurchaseQuery, PurchasesQuery } from '../api/purchase-operations';
import type { CreditPriceQuery as PriceResult } from '../gql/graphql';
import { ErrorNote, credits } from '../ui';
import { useErrorSlots } from '../error-slots';
import { BuyForm } from './buy-form';
import { PurchaseHistory, mergePurchases, newer, type Purchase } from './purchase-history';
import { PurchaseReturn } from './purchase-return';

const PAGE = 20;

/**
 * Buying credits and the purchases made: the Buy form (hidden when the gateway sells none), the
 * page Stripe Checkout sends the buyer back to (`?session=<id>` once paid, `?cancelled=1`), and
 * the history. All of it follows accountUpdated live: a purchase's new state and the balance it
 * left, from whichever instance Stripe's webhook reached.
 */
export function Purchases({ token, live, query }: { token: Bearer; live: Client; query: string }) {
  const params = new URLSearchParams(query);
  const session = params.get('session');
  const cancelled = params.get('cancelled') === '1';
  const [price, setPrice] = useState<PriceResult['creditPrice'] | undefined>(undefined);
  const [list, setList] = useState<Purchase[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [returned, setReturned] = useState<Purchase | null>(null);
  const [missing, setMissing] = useState<string | null>(null);
  const [balance, setBalance] = useState<number | null>(null);
  const [tick, setTick] = useState(0);
  const [busy, setBusy] = useState(false);
  const errors = useErrorSlots();
  // Live updates received so far: a read sent before the latest one answers an older balance.
  const updates = useRef(0);
  // Paged past the first page: reading it again (after a reconnection) only merges.
  const pagedOn = useRef(false);
  // The session returned from, for live updates that arrive before its first read.
  const returning = useRef(session);
  returning.current = session;

  useEffect(() => {
    execute(token, CreditPriceQuery).then((d) => {
      setPrice(d.creditPrice ?? null);
      errors.succeeded('price');
    }, errors.failed('price'));
  }, [token]);

  useEffect(
    () =>
      subscribe(
        live,
        AccountUpdatedSubscription,
        ({ accountUpdated: u }) => {
          updates.current++;
          setBalance(u.account.balance);
          const p = u.purchase;
          // None named: events may have been missed, so everything shown is read again.
          if (!p) return setTick((t) => t + 1);
          setList((l) => mergePurchases(l ?? [], [p]));
          if (p.id === returning.current) setReturned((r) => (newer(p, r?.id === p.id ? r : null) ? p : r));
        },
        (m) => errors.set('live', m),
      ),
    [live],
  );
  useEffect(
    () =>
      live.on('connected', () => {
        errors.set('live', null);
        setTick((t) => t + 1);
      }),
    [live],
  );

  useEffect(() => {
    execute(token, PurchasesQuery, { first: PAGE }).then(({ purchases }) => {
      setList((l) => mergePurchases(l ?? [], purchases.nodes));
      if (!pagedOn.current) setNext(purchases.pageInfo.hasNextPage ? (purchases.pageInfo.endCursor ?? null) : null);
      errors.succeeded('history');
    }, errors.failed('history'));
  }, [token, tick]);

  useEffect(() => {
    const seen = updates.current;
    const keepBalance = (b: number) => updates.current === seen && setBalance(b);
    if (!session) {
      execute(token, AccountQuery).then((d) => {
        keepBalance(d.account.balance);
        errors.succeeded('account');
      }, errors.failed('account'));
      return;
    }
    setReturned((r) => (r?.id === session ? r : null));
    execute(token, PurchaseQuery, { id: session }).then(
      (d) => {
        setMissing(null);
        setReturned((r) => (r?.id === session && !newer(d.purchase, r) ? r : d.purchase));
        keepBalance(d.account.balance);
      },
      (err) => setMissing(describeError(err)),
    );
  }, [token, session, tick]);

  const older = async () => {
    if (!next || busy) return;
    setBusy(true);
    try {
      const { purchases } = await execute(token, PurchasesQuery, { first: PAGE, after: next });
      pagedOn.current = true;
      setList((l) => mergePurchases(l ?? [], purchases.nodes));
      setNext(purchases.pageInfo.hasNextPage ? (purchases.pageInfo.endCursor ?? null) : null);
      errors.succeeded('history');
    } catch (err) {
      errors.failed('history')(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="stack">
      <ErrorNote message={errors.message} />
      {(session || cancelled) && <PurchaseReturn cancelled={cancelled} purchase={returned} balance={balance} missing={missing} />}
      <section class="card" aria-labelledby="buy-heading">
        <h2 id="buy-heading">{price === null ? 'Credits' : 'Buy credits'}</h2>
        <p>
          Balance now: <strong data-testid="purchases-balance">{balance === null ? '…' : credits(balance)}</strong>
        </p>
        {price === undefined && !errors.failing('price') && <p class="hint">Loading…</p>}
        {price === null && <p class="hint">Buying credits is not enabled on this service.</p>}
        {price && <BuyForm token={token} price={price} />}
      </section>
      <section class="card" aria-labelledby="history-heading">
        <h2 id="history-heading">Purchase history</h2>
        {list === null && !errors.failing('history') && <p class="hint">Loading…</p>}
        {list && <PurchaseHistory purchases={list} />}
        {next && (
          <button type="button" class="secondary" onClick={older} disabled={busy}>
            Show older purchases
          </button>
        )}
      </section>
    </div>
  );
}
