import { useState } from 'preact/hooks';
import { describeError, execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import { parseCredits } from '../credit-input';
import { ErrorNote, Notice, useOneAtATime } from '../ui';
import { AdminGrantCreditsMutation } from './admin-operations';

/** Grant credits, or take them back (never below zero), always with a reason: it goes on the ledger entry and in the audit log. */
export function GrantForm({ token, accountId, onDone }: { token: Bearer; accountId: string; onDone: (a: { balance: number; member: boolean }) => void }) {
  const [direction, setDirection] = useState<'grant' | 'take'>('grant');
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const { busy, once } = useOneAtATime();

  const submit = (e: Event) => {
    e.preventDefault();
    setDone(null);
    const read = parseCredits(amount, 'The amount');
    if ('error' in read || read.credits === null) {
      setError('error' in read ? read.error : 'The amount is required.');
      return;
    }
    if (reason.trim() === '') {
      setError('A reason is required: it is kept on the ledger entry and in the audit log.');
      return;
    }
    const amountAsked = read.credits;
    const signed = direction === 'grant' ? amountAsked : -amountAsked;
    void once(async () => {
      try {
        const d = await execute(token, AdminGrantCreditsMutation, { accountId, credits: signed, reason: reason.trim() });
        onDone(d.adminGrantCredits);
        setError(null);
        setAmount('');
        setReason('');
        setDone(`${direction === 'grant' ? 'Granted' : 'Took back'} ${amountAsked.toLocaleString('en-US', { maximumFractionDigits: 6 })} credits.`);
      } catch (err) {
        setError(describeError(err));
      }
    });
  };

  return (
    <section class="card" aria-labelledby="grant-heading">
      <h2 id="grant-heading">Grant or take back credits</h2>
      <form class="grid" onSubmit={submit}>
        <fieldset class="field">
          <legend>Change</legend>
          <div>
            <label class="inline">
              <input type="radio" name="direction" checked={direction === 'grant'} onChange={() => setDirection('grant')} /> Grant
            </label>
            <label class="inline">
              <input type="radio" name="direction" checked={direction === 'take'} onChange={() => setDirection('take')} /> Take back
            </label>
          </div>
        </fieldset>
        <div class="field">
          <label for="grant-amount">Credits</label>
          <input id="grant-amount" inputMode="decimal" autoComplete="off" value={amount} onInput={(e) => setAmount(e.currentTarget.value)} />
        </div>
        <div class="field wide">
          <label for="grant-reason">Reason</label>
          <input id="grant-reason" aria-required="true" autoComplete="off" value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </div>
        <ErrorNote message={error} />
        <div class="row wide">
          <button type="submit" disabled={busy}>
            {direction === 'grant' ? 'Grant credits' : 'Take back credits'}
          </button>
        </div>
      </form>
      <Notice message={done} />
    </section>
  );
}
