/**
 * A work row's lease must outlive the work it guards, or a second instance takes the row over
 * while the first is still calling out and the work is done twice. Two rules keep it so:
 *
 * - every single outbound call made under a lease (a provider call, a webhook delivery) has a
 *   timeout shorter than the lease: unset, WORK_LEASE_SECONDS is derived so (the longest such
 *   call plus a margin, 30 s at least); set shorter than one, it stops the service with a
 *   message naming both and the fix;
 * - a handler that makes several calls in a row (status, result, video download) is covered by
 *   the worker renewing the leases of everything it runs every third of the lease (Worker).
 */
export interface LeasedCall {
  /** What makes the call, named as the operator sets it (e.g. `WEBHOOK_TIMEOUT_SECONDS`). */
  name: string;
  seconds: number;
}

/** The lease problems of a configuration; empty when every call fits inside the lease. */
export function leaseProblems(leaseSeconds: number, calls: LeasedCall[]): string[] {
  return calls
    .filter((c) => c.seconds >= leaseSeconds)
    .map(
      (c) =>
        `WORK_LEASE_SECONDS (${leaseSeconds}) must be longer than ${c.name} (${c.seconds}), a call made under a lease: raise it above ${c.seconds}, or unset it to have it derived`,
    );
}

export const DEFAULT_LEASE_SECONDS = 30;
/** What a derived lease leaves beyond its longest call: the renewal's round trip and a slow start. */
const LEASE_MARGIN_SECONDS = 10;

/** The lease to run with: the operator's, else one that covers every call made under it. */
export function effectiveLeaseSeconds(configured: number | undefined, calls: LeasedCall[]): number {
  if (configured !== undefined) return configured;
  return Math.max(DEFAULT_LEASE_SECONDS, ...calls.map((c) => Math.ceil(c.seconds) + LEASE_MARGIN_SECONDS));
}

/** How often the worker renews the leases of the items it runs. */
export function renewEveryMs(leaseSeconds: number): number {
  return Math.max(100, (leaseSeconds * 1000) / 3);
}

/** The provider calls the worker makes under a lease: each upstream route of the video and motion-control models. */
export function videoRouteCalls(catalog: {
  models: ReadonlyArray<{ id: string; group: string; routes: ReadonlyArray<{ id: string; provider: string; timeoutSeconds: number }> }>;
}): LeasedCall[] {
  return catalog.models
    .filter((m) => m.group === 'video' || m.group === 'motion-control')
    .flatMap((m) =>
      m.routes.filter((r) => r.provider !== 'simulator').map((r) => ({ name: `the timeoutSeconds of ${m.id}'s route ${r.id}`, seconds: r.timeoutSeconds })),
    );
}
