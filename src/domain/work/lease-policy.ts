/**
 * A work row's lease must outlive the work it guards, or a second instance takes the row over
 * while the first is still calling out and the work is done twice. Two rules keep it so:
 *
 * - every single outbound call made under a lease (a provider call, a webhook delivery) has a
 *   timeout shorter than the lease: checked here, at start-up, and a setting that breaks it stops
 *   the service with a message naming WORK_LEASE_SECONDS;
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
    .map((c) => `WORK_LEASE_SECONDS (${leaseSeconds}) must be longer than ${c.name} (${c.seconds}), the longest call made under a lease`);
}

/** How often the worker renews the leases of the items it runs. */
export function renewEveryMs(leaseSeconds: number): number {
  return Math.max(100, (leaseSeconds * 1000) / 3);
}
