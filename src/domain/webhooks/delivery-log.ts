import { PageRule } from '../shared/page-rule';

/** One delivery attempt as the log shows it. */
export interface DeliveryRecord {
  eventId: string;
  /** The event's type: `video.completed`, `video.failed`, or an account event's (`balance.low`, …). */
  eventType: string;
  deliveryId: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  created: number;
}

/** What an attempt's log line records. */
export interface DeliveryAttemptEntry {
  deliveryId: string;
  eventId: string;
  /** The event's type, as `X-Svc-Event` sends it. */
  event: string;
  keyId: string | null;
  accountId: string;
  jobId: string | null;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * Which attempts a listing shows, newest first: by key (and account, for owners) and/or job
 * (operators), or the account's own events (`accountEvents`: those of its webhook, not its keys').
 */
export interface DeliveryFilter {
  keyId?: string;
  accountId?: string;
  jobId?: string;
  accountEvents?: boolean;
  limit: number;
}

/** A delivery log's page: 100 newest by default, 500 at most (no cursor). */
export const DELIVERY_PAGE = new PageRule(500, 100);
