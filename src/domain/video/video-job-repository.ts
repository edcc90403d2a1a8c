import type { SqlExecutor } from '../ports/database';
import type { VideoJobSpec } from './video-port';
import type { VideoJob, VideoJobStatus } from './video-job';
import type { RequestLogRow } from '../requests/call-log';

/** A job as it is accepted: PROCESSING, charged `chargedMicro`, due to end within `timeoutSeconds`. */
export interface NewVideoJob {
  id: string;
  accountId: string;
  apiKeyId: string;
  testMode: boolean;
  model: string;
  kind: VideoJob['kind'];
  provider: string;
  spec: VideoJobSpec;
  chargedMicro: number;
  timeoutSeconds: number;
  /** The request-log row of the call that queued it, written in the same statement. */
  log?: RequestLogRow;
}

export type JobOutcome = { status: 'COMPLETED'; mediaId: string; thumbnailMediaId?: string | null; usedMicro: number } | { status: 'FAILED'; reason: string };

/**
 * Video jobs, stored; times are the database's clock. A job's media URL is derived from its media
 * id, so it is never stored stale. Its SQL: infra/db/repositories/sql-video-jobs.ts. Writes take
 * the transaction they commit in (with the charge and the work rows they go with). A job its
 * owner deleted is read only by the worker's and the finisher's reads (by id, for update, with its
 * time left): every read of the account's leaves it out.
 */
export interface VideoJobRepository {
  /** Runs `work` in one transaction: commits when it resolves, rolls back when it throws. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  insert(tx: SqlExecutor, job: NewVideoJob): Promise<VideoJob>;
  /** The job, its row locked until `tx` ends, so one finisher at a time moves it. */
  getForUpdate(tx: SqlExecutor, id: string): Promise<VideoJob | undefined>;
  /**
   * The job, with the seconds left before its deadline by the database's clock, the one that set
   * it (0 or less: passed), so an instance whose own clock runs ahead does not fail healthy jobs
   * as `timeout`.
   */
  getWithTimeLeft(id: string): Promise<{ job: VideoJob; secondsLeft: number } | undefined>;
  /** The account's jobs changed at or after `since`, oldest change first (at most `limit`). */
  changedSince(accountId: string, since: Date, limit: number): Promise<VideoJob[]>;
  /** The job only when it belongs to the account: another account's job is as missing as none. */
  getOwned(id: string, accountId: string): Promise<VideoJob | undefined>;
  /** Submitted upstream: the provider's queue id, and the route that accepted it (null for the simulator); undefined once terminal. */
  setSubmitted(tx: SqlExecutor, id: string, queueId: string, routeId?: string | null): Promise<VideoJob | undefined>;
  /** PROCESSING → COMPLETED | FAILED, once: answers undefined when the job was already terminal. */
  finish(tx: SqlExecutor, id: string, outcome: JobOutcome): Promise<VideoJob | undefined>;
  /** A PROCESSING job's progress as the upstream reported it: the job when it changed, else undefined. */
  setProgress(id: string, progress: number): Promise<VideoJob | undefined>;
  /** Deletes a terminal job of the account from view: the job as it was, or undefined when there was none to delete. */
  remove(id: string, accountId: string): Promise<VideoJob | undefined>;
  /** Whether the job is, or was before its deletion, one of the account's (a list cursor). */
  owns(id: string, accountId: string): Promise<boolean>;
  /** Keyset pagination, newest first unless `order` is asc; `after` is the id of the last job of the previous page. */
  list(accountId: string, opts: { first: number; after?: string; status?: VideoJobStatus; order?: 'asc' | 'desc' }): Promise<VideoJob[]>;
}
