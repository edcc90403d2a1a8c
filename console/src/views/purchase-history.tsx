import type { PurchaseFieldsFragment, PurchaseStatus } from '../gql/graphql';
import { credits, when } from '../ui';
import { usd } from './buy-form';

export type Purchase = PurchaseFieldsFragment;

export const STATUS_WORDS: Record<PurchaseStatus, string> = {
  PENDING: 'Pending',
  COMPLETED: 'Completed',
  PARTIALLY_REFUNDED: 'Partly refunded',
  REFUNDED: 'Refunded',
  EXPIRED: 'Expired',
  FAILED: 'Failed',
};
/** The badge's colour: the job statuses' (under way, done, ended otherwise). */
const BADGE: Record<PurchaseStatus, string> = {
  PENDING: 'processing',
  COMPLETED: 'completed',
  PARTIALLY_REFUNDED: 'failed',
  REFUNDED: 'failed',
  EXPIRED: 'failed',
  FAILED: 'failed',
};

/**
 * How far along a purchase is: a state never moves back (paid, then refunded in part, then in
 * full), so a read that answers an older state than one already shown is not taken.
 */
const RANK: Record<PurchaseStatus, number> = { PENDING: 0, COMPLETED: 1, EXPIRED: 1, FAILED: 1, PARTIALLY_REFUNDED: 2, REFUNDED: 3 };
export const newer = (incoming: Purchase, known: Purchase | null | undefined): boolean => !known || RANK[incoming.status] >= RANK[known.status];

/** Newest first; a purchase seen again replaces the one shown unless it is an older state of it. */
export function mergePurchases(list: Purchase[], incoming: Purchase[]): Purchase[] {
  const byId = new Map(list.map((p) => [p.id, p]));
  for (const p of incoming) if (newer(p, byId.get(p.id))) byId.set(p.id, p);
  return [...byId.values()].sort((a, b) => (a.created === b.created ? (a.id < b.id ? 1 : -1) : a.created < b.created ? 1 : -1));
}

export function StatusBadge({ status }: { status: PurchaseStatus }) {
  return <span class={`status ${BADGE[status]}`}>{STATUS_WORDS[status]}</span>;
}

/** The account's purchases: when, what they grant, what they cost, where they stand. */
export function PurchaseHistory({ purchases }: { purchases: Purchase[] }) {
  if (purchases.length === 0) return <p>No purchases yet.</p>;
  return (
    <table class="stacked" aria-label="Purchases">
      <caption class="hint">Newest first. Credits include a member's bonus.</caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col" class="num">
            Credits
          </th>
          <th scope="col" class="num">
            Amount
          </th>
          <th scope="col">Status</th>
        </tr>
      </thead>
      <tbody>
        {purchases.map((p) => (
          <tr key={p.id} data-purchase-id={p.id}>
            <td data-label="When">
              {when(p.created)}
              <span class="detail mono">{p.id}</span>
            </td>
            <td data-label="Credits" class="num">
              {credits(p.credits)}
            </td>
            <td data-label="Amount" class="num">
              {usd(p.amountUsd)}
            </td>
            <td data-label="Status">
              <StatusBadge status={p.status} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
