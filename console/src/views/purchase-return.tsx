import { credits } from '../ui';
import { StatusBadge, type Purchase } from './purchase-history';

/**
 * Back from Stripe Checkout. Paid: Stripe tells the gateway by webhook, usually a moment after the
 * buyer is sent back, so the page waits for that word (it arrives live) and then shows the credits
 * and the balance they made. Cancelled: nothing was charged.
 */
export function PurchaseReturn({
  cancelled,
  purchase,
  balance,
  missing,
}: {
  cancelled: boolean;
  purchase: Purchase | null;
  balance: number | null;
  missing: string | null;
}) {
  if (cancelled) {
    return (
      <section class="card return" aria-labelledby="return-heading">
        <h2 id="return-heading">Checkout cancelled</h2>
        <p role="status">You left Stripe Checkout before paying: nothing was charged and no credits were added.</p>
      </section>
    );
  }
  return (
    <section class="card return" aria-labelledby="return-heading" aria-busy={purchase?.status === 'PENDING'}>
      <h2 id="return-heading">Your purchase</h2>
      <div role="status" data-testid="purchase-return">
        {missing && <p class="error">{missing}</p>}
        {!missing && !purchase && <p class="hint">Looking up your purchase…</p>}
        {purchase?.status === 'PENDING' && (
          <p>
            <strong>Waiting for payment confirmation…</strong> Stripe confirms the payment to the gateway; this page updates by itself when it does.
          </p>
        )}
        {purchase?.status === 'COMPLETED' && (
          <p>
            <strong>Payment received: {credits(purchase.credits)} added.</strong> Your balance is now{' '}
            <strong data-testid="return-balance">{credits(balance)}</strong>.
          </p>
        )}
        {purchase && (purchase.status === 'EXPIRED' || purchase.status === 'FAILED') && (
          <p>The payment did not go through: nothing was charged and no credits were added.</p>
        )}
        {purchase && (purchase.status === 'REFUNDED' || purchase.status === 'PARTIALLY_REFUNDED') && (
          <p>
            This purchase was refunded{purchase.status === 'PARTIALLY_REFUNDED' ? ' in part' : ''}; its share of the credits was taken back. Your balance is now{' '}
            <strong data-testid="return-balance">{credits(balance)}</strong>.
          </p>
        )}
      </div>
      {purchase && (
        <p class="hint">
          <StatusBadge status={purchase.status} /> <span class="mono">{purchase.id}</span>
        </p>
      )}
    </section>
  );
}
