import type { Database, SqlExecutor } from '../../../domain/ports/database';
import type { VideoJobSpec } from '../../../domain/video/video-port';
import type { VideoJob, VideoJobStatus } from '../../../domain/video/video-job';
import type { JobOutcome, NewVideoJob, VideoJobRepository } from '../../../domain/video/video-job-repository';
import { microToCredits } from '../../../domain/shared/money';
import { loggedCallsJson } from './charge-items-json';

interface JobRow {
  id: string;
  account_id: string;
  api_key_id: string;
  test_mode: boolean;
  model: string;
  kind: 'video' | 'motion-control';
  provider: string;
  route_id: string | null;
  spec: VideoJobSpec;
  queue_id: string;
  status: VideoJobStatus;
  credits_charged_micro: string | number;
  credits_used_micro: string | number | null;
  progress: number;
  media_id: string | null;
  thumbnail_media_id: string | null;
  reason: string | null;
  submitted_at: Date | null;
  finished_at: Date | null;
  deadline_at: Date;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, account_id, api_key_id, test_mode, model, kind, provider, route_id, spec, queue_id, status, credits_charged_micro,
  credits_used_micro, progress, media_id, thumbnail_media_id, reason, submitted_at, finished_at, deadline_at, created_at, updated_at`;

/** What the account sees: a job its owner deleted is gone from every view. */
const SHOWN = 'deleted_at is null';

/** Video jobs on `video_jobs`: rows ↔ jobs. */
export class SqlVideoJobRepository implements VideoJobRepository {
  constructor(
    private readonly db: Database,
    private readonly mediaUrl: (mediaId: string) => string,
  ) {}

  private toJob(r: JobRow): VideoJob {
    return {
      id: r.id,
      accountId: r.account_id,
      apiKeyId: r.api_key_id,
      testMode: r.test_mode,
      model: r.model,
      kind: r.kind,
      provider: r.provider,
      routeId: r.route_id,
      spec: typeof r.spec === 'string' ? (JSON.parse(r.spec) as VideoJobSpec) : r.spec,
      queueId: r.queue_id,
      status: r.status,
      creditsCharged: microToCredits(r.credits_charged_micro),
      creditsUsed: r.credits_used_micro === null ? null : microToCredits(r.credits_used_micro),
      progress: Number(r.progress),
      url: r.media_id ? this.mediaUrl(r.media_id) : null,
      mediaId: r.media_id,
      thumbnailMediaId: r.thumbnail_media_id,
      reason: r.reason,
      submittedAt: r.submitted_at ? new Date(r.submitted_at) : null,
      // Jobs that ended before the end was recorded: their last change was the end.
      finishedAt: r.finished_at ? new Date(r.finished_at) : r.status === 'PROCESSING' ? null : new Date(r.updated_at),
      deadlineAt: new Date(r.deadline_at),
      createdAt: new Date(r.created_at),
      updatedAt: new Date(r.updated_at),
    };
  }

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async insert(tx: SqlExecutor, j: NewVideoJob): Promise<VideoJob> {
    // The request-log row of the call that queued it (if any) in the same statement: no round trip of its own.
    const row = await tx.one<JobRow>(
      `with logged as (select svc_log_requests(?::jsonb) as n)
       insert into video_jobs (id, account_id, api_key_id, test_mode, model, kind, provider, spec, queue_id, status, credits_charged_micro, deadline_at)
       select ?::text, ?::text, ?::text, ?::boolean, ?::text, ?::text, ?::text, ?::jsonb, '', 'PROCESSING', ?::bigint, now() + make_interval(secs => ?::double precision)
         from logged returning ${COLUMNS}`,
      [
        loggedCallsJson(j.log ? [j.log] : []),
        j.id,
        j.accountId,
        j.apiKeyId,
        j.testMode,
        j.model,
        j.kind,
        j.provider,
        JSON.stringify(j.spec),
        j.chargedMicro,
        j.timeoutSeconds,
      ],
    );
    return this.toJob(row!);
  }

  async getForUpdate(tx: SqlExecutor, id: string): Promise<VideoJob | undefined> {
    const row = await tx.one<JobRow>(`select ${COLUMNS} from video_jobs where id = ? for update`, [id]);
    return row ? this.toJob(row) : undefined;
  }

  async getWithTimeLeft(id: string): Promise<{ job: VideoJob; secondsLeft: number } | undefined> {
    const row = await this.db.one<JobRow & { seconds_left: string | number }>(
      `select ${COLUMNS}, extract(epoch from (deadline_at - now())) as seconds_left from video_jobs where id = ?`,
      [id],
    );
    return row ? { job: this.toJob(row), secondsLeft: Number(row.seconds_left) } : undefined;
  }

  async changedSince(accountId: string, since: Date, limit: number): Promise<VideoJob[]> {
    const rows = await this.db.all<JobRow>(
      `select ${COLUMNS} from video_jobs where account_id = ? and updated_at >= ? and ${SHOWN} order by updated_at, id limit ?`,
      [accountId, since, limit],
    );
    return rows.map((r) => this.toJob(r));
  }

  async getOwned(id: string, accountId: string): Promise<VideoJob | undefined> {
    const row = await this.db.one<JobRow>(`select ${COLUMNS} from video_jobs where id = ? and account_id = ? and ${SHOWN}`, [id, accountId]);
    return row ? this.toJob(row) : undefined;
  }

  async owns(id: string, accountId: string): Promise<boolean> {
    return (await this.db.one(`select 1 as found from video_jobs where id = ? and account_id = ?`, [id, accountId])) !== undefined;
  }

  async setSubmitted(tx: SqlExecutor, id: string, queueId: string, routeId: string | null = null): Promise<VideoJob | undefined> {
    const row = await tx.one<JobRow>(
      `update video_jobs set queue_id = ?, route_id = ?, submitted_at = now(), updated_at = now() where id = ? and status = 'PROCESSING' returning ${COLUMNS}`,
      [queueId, routeId, id],
    );
    return row ? this.toJob(row) : undefined;
  }

  async finish(tx: SqlExecutor, id: string, outcome: JobOutcome): Promise<VideoJob | undefined> {
    const row =
      outcome.status === 'COMPLETED'
        ? await tx.one<JobRow>(
            `update video_jobs set status = 'COMPLETED', media_id = ?, thumbnail_media_id = ?, credits_used_micro = ?, progress = 100,
               finished_at = now(), updated_at = now()
             where id = ? and status = 'PROCESSING' returning ${COLUMNS}`,
            [outcome.mediaId, outcome.thumbnailMediaId ?? null, outcome.usedMicro, id],
          )
        : await tx.one<JobRow>(
            `update video_jobs set status = 'FAILED', reason = ?, credits_used_micro = 0, finished_at = now(), updated_at = now()
             where id = ? and status = 'PROCESSING' returning ${COLUMNS}`,
            [outcome.reason, id],
          );
    return row ? this.toJob(row) : undefined;
  }

  async setProgress(id: string, progress: number): Promise<VideoJob | undefined> {
    const row = await this.db.one<JobRow>(
      `update video_jobs set progress = ?, updated_at = now() where id = ? and status = 'PROCESSING' and progress <> ? returning ${COLUMNS}`,
      [progress, id, progress],
    );
    return row ? this.toJob(row) : undefined;
  }

  async remove(id: string, accountId: string): Promise<VideoJob | undefined> {
    const row = await this.db.one<JobRow>(
      `update video_jobs set deleted_at = now() where id = ? and account_id = ? and status <> 'PROCESSING' and ${SHOWN} returning ${COLUMNS}`,
      [id, accountId],
    );
    return row ? this.toJob(row) : undefined;
  }

  async list(accountId: string, opts: { first: number; after?: string; status?: VideoJobStatus; order?: 'asc' | 'desc' }): Promise<VideoJob[]> {
    const params: unknown[] = [accountId];
    const ascending = opts.order === 'asc';
    let where = `account_id = ? and ${SHOWN}`;
    if (opts.status) {
      where += ' and status = ?';
      params.push(opts.status);
    }
    if (opts.after) {
      // The cursor job may have been deleted since: its place in the order still holds.
      where += ` and (created_at, id) ${ascending ? '>' : '<'} (select created_at, id from video_jobs where id = ? and account_id = ?)`;
      params.push(opts.after, accountId);
    }
    params.push(opts.first);
    const order = ascending ? 'created_at, id' : 'created_at desc, id desc';
    const rows = await this.db.all<JobRow>(`select ${COLUMNS} from video_jobs where ${where} order by ${order} limit ?`, params);
    return rows.map((r) => this.toJob(r));
  }
}
