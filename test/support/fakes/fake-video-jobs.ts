import type { SqlExecutor } from '../../../src/domain/ports/database';
import type { VideoJob, VideoJobStatus } from '../../../src/domain/video/video-job';
import type { JobOutcome, NewVideoJob, VideoJobRepository } from '../../../src/domain/video/video-job-repository';
import { microToCredits } from '../../../src/domain/shared/money';
import { FakeRows, type FakeDatabase } from './fake-database';

interface Row {
  job: VideoJob;
  mediaId: string | null;
  deleted: boolean;
  /** Insertion order: jobs created in the same millisecond still list newest first. */
  seq: number;
}

/** Video jobs in memory, on the fake database's clock; a job's URL is derived from its media id, as the real repository does. */
export class FakeVideoJobRepository implements VideoJobRepository {
  private readonly table = new FakeRows<string, Row>();
  private seq = 0;

  constructor(
    private readonly db: FakeDatabase,
    private readonly mediaUrl: (mediaId: string) => string = (id) => `https://media.test/${id}.mp4`,
  ) {
    db.table(this.table);
  }

  private read(row: Row): VideoJob {
    return { ...structuredClone(row.job), url: row.mediaId ? this.mediaUrl(row.mediaId) : null };
  }

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async insert(tx: SqlExecutor, j: NewVideoJob): Promise<VideoJob> {
    this.db.inTransaction(tx);
    if (this.table.rows.has(j.id)) throw new Error(`duplicate key: video job ${j.id}`);
    const now = this.db.now();
    const job: VideoJob = {
      id: j.id,
      accountId: j.accountId,
      apiKeyId: j.apiKeyId,
      testMode: j.testMode,
      model: j.model,
      kind: j.kind,
      provider: j.provider,
      routeId: null,
      spec: structuredClone(j.spec),
      queueId: '',
      status: 'PROCESSING',
      creditsCharged: microToCredits(j.chargedMicro),
      creditsUsed: null,
      progress: 0,
      url: null,
      mediaId: null,
      thumbnailMediaId: null,
      reason: null,
      submittedAt: null,
      finishedAt: null,
      deadlineAt: new Date(this.db.nowMs + j.timeoutSeconds * 1000),
      createdAt: now,
      updatedAt: now,
    };
    const row = { job, mediaId: null, deleted: false, seq: this.seq++ };
    this.table.rows.set(j.id, row);
    return this.read(row);
  }

  async getForUpdate(tx: SqlExecutor, id: string): Promise<VideoJob | undefined> {
    this.db.inTransaction(tx);
    const row = this.table.rows.get(id);
    return row && this.read(row);
  }

  async getWithTimeLeft(id: string): Promise<{ job: VideoJob; secondsLeft: number } | undefined> {
    const row = this.table.rows.get(id);
    return row && { job: this.read(row), secondsLeft: (row.job.deadlineAt.getTime() - this.db.nowMs) / 1000 };
  }

  async changedSince(accountId: string, since: Date, limit: number): Promise<VideoJob[]> {
    return [...this.table.rows.values()]
      .filter((r) => r.job.accountId === accountId && !r.deleted && r.job.updatedAt >= since)
      .sort((a, b) => a.job.updatedAt.getTime() - b.job.updatedAt.getTime() || a.seq - b.seq)
      .slice(0, limit)
      .map((r) => this.read(r));
  }

  async getOwned(id: string, accountId: string): Promise<VideoJob | undefined> {
    const row = this.table.rows.get(id);
    return row && row.job.accountId === accountId && !row.deleted ? this.read(row) : undefined;
  }

  async owns(id: string, accountId: string): Promise<boolean> {
    return this.table.rows.get(id)?.job.accountId === accountId;
  }

  async setProgress(id: string, progress: number): Promise<VideoJob | undefined> {
    const row = this.table.rows.get(id);
    if (!row || row.job.status !== 'PROCESSING' || row.job.progress === progress) return undefined;
    Object.assign(row.job, { progress, updatedAt: this.db.now() });
    return this.read(row);
  }

  async remove(id: string, accountId: string): Promise<VideoJob | undefined> {
    const row = this.table.rows.get(id);
    if (!row || row.job.accountId !== accountId || row.deleted || row.job.status === 'PROCESSING') return undefined;
    row.deleted = true;
    return this.read(row);
  }

  async setSubmitted(tx: SqlExecutor, id: string, queueId: string, routeId: string | null = null): Promise<VideoJob | undefined> {
    this.db.inTransaction(tx);
    const row = this.table.rows.get(id);
    if (!row || row.job.status !== 'PROCESSING') return undefined;
    Object.assign(row.job, { queueId, routeId, submittedAt: this.db.now(), updatedAt: this.db.now() });
    return this.read(row);
  }

  async finish(tx: SqlExecutor, id: string, outcome: JobOutcome): Promise<VideoJob | undefined> {
    this.db.inTransaction(tx);
    const row = this.table.rows.get(id);
    if (!row || row.job.status !== 'PROCESSING') return undefined;
    if (outcome.status === 'COMPLETED') {
      row.mediaId = outcome.mediaId;
      const thumbnailMediaId = outcome.thumbnailMediaId ?? null;
      Object.assign(row.job, {
        status: 'COMPLETED',
        creditsUsed: microToCredits(outcome.usedMicro),
        progress: 100,
        mediaId: outcome.mediaId,
        thumbnailMediaId,
      });
    } else {
      Object.assign(row.job, { status: 'FAILED', reason: outcome.reason, creditsUsed: 0 });
    }
    row.job.updatedAt = row.job.finishedAt = this.db.now();
    return this.read(row);
  }

  async list(accountId: string, opts: { first: number; after?: string; status?: VideoJobStatus; order?: 'asc' | 'desc' }): Promise<VideoJob[]> {
    const sign = opts.order === 'asc' ? -1 : 1;
    const before = (a: Row, b: Row) => sign * (b.job.createdAt.getTime() - a.job.createdAt.getTime() || b.seq - a.seq);
    const ordered = [...this.table.rows.values()].filter((r) => r.job.accountId === accountId && (!opts.status || r.job.status === opts.status)).sort(before);
    let from = 0;
    if (opts.after) {
      const cursor = this.table.rows.get(opts.after);
      if (!cursor || cursor.job.accountId !== accountId) return [];
      from = ordered.findIndex((r) => before(cursor, r) < 0);
      if (from < 0) return [];
    }
    return ordered
      .slice(from)
      .filter((r) => !r.deleted)
      .slice(0, opts.first)
      .map((r) => this.read(r));
  }
}
