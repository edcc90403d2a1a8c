import { PageRule } from '../shared/page-rule';
import type { IdempotentCall } from '../idempotency/idempotency-service';
import type { Catalog } from '../catalog/catalog';
import type { MotionModel, VideoModel } from '../catalog/model';
import type { UrlGuard } from '../ports/url-guard';
import type { JobEventBus } from '../events/job-events';
import type { KeyPrincipal } from '../keys/principal';
import { assertModelAllowed } from '../keys/permissions';
import type { RateLimiter } from '../ratelimit/rate-limiter';
import { enforceRateLimit } from '../ratelimit/enforce';
import type { WorkQueue } from '../work/work-queue';
import type { Clock } from '../ports/clock';
import { systemClock } from '../shared/system-clock';
import { invalidField, notFound } from '../errors/domain-error';
import { parseInput } from '../shared/validate';
import { creditsToMicro } from '../shared/money';
import { newId } from '../shared/ids';
import type { VideoJobSpec, VideoProvider, VideoProviders } from './video-port';
import type { VideoJob, VideoJobStatus } from './video-job';
import type { VideoJobRepository } from './video-job-repository';
import type { VideoLedger } from './video-ledger';
import { durationSeconds, estimatedCostUsd, motionCredits, videoCredits } from './video-pricing';
import type { CallLog } from '../requests/call-log';
import type { Tracing } from '../ports/tracing';
import { DEFAULT_DURATION, DEFAULT_RESOLUTION, fieldNotTaken, motionSchema, queueSchema, quoteSchema, retrieveSchema } from './video-requests';

export const MOTION_MODEL_ID = 'svc-v3-motion-control';

export interface VideoQuote {
  model: string;
  duration: string;
  resolution: string;
  credits: number;
  estimatedCostUsd: { member: number; nonMember: number };
}

export interface AcceptedJob {
  job: VideoJob;
  headers: Record<string, string>;
}

/** Changes an account-wide subscription re-reads after an outage, at most (the oldest first). */
const MAX_RESYNCED_JOBS = 500;

/** What a job id looks like: a list's cursor. */
export const VIDEO_JOB_ID = /^vid_[A-Za-z0-9]{1,64}$/;

/** A job list's page: 20 by default, 100 at most; the cursor is a job id (`vid_…`). */
export const VIDEO_JOB_PAGE = new PageRule(100, 20, { pattern: VIDEO_JOB_ID, of: 'a job' });

/**
 * An image for the job that the caller's door has already made safe to hand upstream (checked as
 * a caller URL, or stored by the gateway itself): the model's `image_url`, or its one reference.
 */
export interface CheckedImage {
  url: string;
}

/** Quote, queue, motion control, retrieve and list: the asynchronous video API. */
export class VideoService {
  private readonly changedReads = new Map<string, Promise<VideoJob[]>>();

  constructor(
    private readonly deps: {
      catalog: Catalog;
      providers: VideoProviders;
      limiter: RateLimiter;
      urls: UrlGuard;
      jobs: VideoJobRepository;
      queue: WorkQueue;
      events: JobEventBus;
      timeoutSeconds: number;
      /** Wakes the local worker after a job row is written. */
      nudge: () => void;
      /** What a queued job was charged, on the request's trace. */
      tracing?: Tracing;
      /** Calls back the account's leased credits when the balance alone falls short (LeaseBook). */
      leases?: { chargeBeside<T>(key: KeyPrincipal, amountMicro: number, charge: () => Promise<T>): Promise<T> };
      /** Charges the job, in the transaction that writes it (the credit ledger). */
      ledger: VideoLedger;
      /** What a provider that knows its progress without a call (the simulator) reads it at. */
      clock?: Clock;
    },
  ) {}

  quote(key: KeyPrincipal, input: unknown): VideoQuote {
    const v = parseInput(quoteSchema, input);
    if (v.model === MOTION_MODEL_ID) {
      const model = this.deps.catalog.require(v.model, 'motion-control');
      assertModelAllowed(key, model.id);
      const notTaken = fieldNotTaken('motion-control', model.id, v);
      if (notTaken) throw notTaken;
      if (v.duration_seconds === undefined) throw invalidField(['duration_seconds'], 'is required for motion control.');
      const credits = motionCredits(model, v.duration_seconds);
      return {
        model: model.id,
        duration: `${v.duration_seconds}s`,
        resolution: DEFAULT_RESOLUTION,
        credits,
        estimatedCostUsd: estimatedCostUsd(this.deps.catalog, credits),
      };
    }
    const model = this.deps.catalog.require(v.model, 'video');
    assertModelAllowed(key, model.id);
    const notTaken = fieldNotTaken('video', model.id, v);
    if (notTaken) throw notTaken;
    const duration = v.duration ?? DEFAULT_DURATION;
    const resolution = v.resolution ?? DEFAULT_RESOLUTION;
    const credits = videoCredits(model, duration, resolution);
    return { model: model.id, duration, resolution, credits, estimatedCostUsd: estimatedCostUsd(this.deps.catalog, credits) };
  }

  /**
   * `idempotent`, when the request has an Idempotency-Key, names the job (`vid_…`): see
   * IdempotentCall. `log`, the call's request-log row, is written with the job. `image`, from a
   * door that took it otherwise (/v1/videos' `input_reference`), is the model's image or its one
   * reference, in place of `image_url` / `reference_image_urls`.
   */
  async queue(key: KeyPrincipal, input: unknown, idempotent?: IdempotentCall, log?: CallLog, image?: CheckedImage): Promise<AcceptedJob> {
    const v = parseInput(queueSchema, input);
    const model = this.deps.catalog.require(v.model, 'video');
    log?.named(model.id);
    assertModelAllowed(key, model.id);
    const imageGiven = v.image_url !== undefined || (image !== undefined && model.input === 'image');
    const referencesGiven = v.reference_image_urls !== undefined || (image !== undefined && model.input === 'reference');
    if (model.input !== 'image' && !v.prompt) throw invalidField(['prompt'], 'is required for this model.');
    if (model.input === 'image' && !imageGiven) throw invalidField(['image_url'], 'is required for image-to-video models.');
    if (model.input !== 'image' && v.image_url) throw invalidField(['image_url'], `${model.id} does not take an image.`);
    if (model.input === 'reference' && !referencesGiven) throw invalidField(['reference_image_urls'], '1 to 4 URLs are required for reference-to-video.');
    if (model.input !== 'reference' && v.reference_image_urls) throw invalidField(['reference_image_urls'], `${model.id} does not take reference images.`);
    if (image && model.input === 'text') throw invalidField(['image_url'], `${model.id} does not take an image.`);
    const imageUrl = v.image_url ? await this.deps.urls.checkMediaUrl(v.image_url, ['image_url']) : model.input === 'image' ? image?.url : undefined;
    const referenceImageUrls = v.reference_image_urls
      ? await Promise.all(v.reference_image_urls.map((u, i) => this.deps.urls.checkMediaUrl(u, ['reference_image_urls', i])))
      : model.input === 'reference' && image
        ? [image.url]
        : undefined;
    const spec: Omit<VideoJobSpec, 'jobId'> = {
      upstreamModel: model.route.upstreamModel,
      kind: 'video',
      prompt: v.prompt,
      durationSeconds: durationSeconds(v.duration),
      resolution: v.resolution,
      aspectRatio: v.aspect_ratio,
      audio: v.audio,
      imageUrl,
      referenceImageUrls,
    };
    return this.accept(key, model, spec, videoCredits(model, v.duration, v.resolution), idempotent, log);
  }

  async motionControl(key: KeyPrincipal, input: unknown, idempotent?: IdempotentCall, log?: CallLog): Promise<AcceptedJob> {
    const v = parseInput(motionSchema, input);
    const model = this.deps.catalog.require(MOTION_MODEL_ID, 'motion-control');
    log?.named(model.id);
    assertModelAllowed(key, model.id);
    const imageUrl = await this.deps.urls.checkMediaUrl(v.image_url, ['image_url']);
    const videoUrl = await this.deps.urls.checkMediaUrl(v.video_url, ['video_url']);
    const spec: Omit<VideoJobSpec, 'jobId'> = {
      upstreamModel: model.route.upstreamModel,
      kind: 'motion-control',
      prompt: v.prompt || undefined,
      durationSeconds: v.duration_seconds,
      imageUrl,
      videoUrl,
      keepOriginalSound: v.keep_original_sound,
      characterOrientation: v.character_orientation,
    };
    return this.accept(key, model, spec, motionCredits(model, v.duration_seconds), idempotent, log);
  }

  /**
   * Charge, job row and its work row in one transaction, and nothing else: the worker that
   * claims the row submits the job upstream (VideoJobRunner), so there is one place that
   * submits and the client gets PROCESSING without waiting for the provider.
   */
  private async accept(
    key: KeyPrincipal,
    model: VideoModel | MotionModel,
    partial: Omit<VideoJobSpec, 'jobId'>,
    credits: number,
    idempotent: IdempotentCall | undefined,
    log: CallLog | undefined,
  ): Promise<AcceptedJob> {
    const id = idempotent ? `vid_${idempotent.id}` : newId('vid');
    // A retry that took over the claim of a run that queued (and charged) this job and left no
    // answer (its instance died) gets that job, before any limit: it is the answer the first
    // request never delivered, and a refusal here would send the client off to queue it again.
    const queued = idempotent?.resumed ? await this.deps.jobs.getOwned(id, key.accountId) : null;
    if (queued) {
      log?.forJob(queued.id);
      return { job: queued, headers: {} };
    }
    const headers = await enforceRateLimit(this.deps.limiter, key.keyId, 'video');
    const spec: VideoJobSpec = { jobId: id, ...partial };
    const provider = this.deps.providers.providerName(model, key.mode);
    const chargedMicro = creditsToMicro(credits);
    // The row goes in the job's transaction (what a test key's job would have cost, for one).
    log?.usedSeconds(partial.durationSeconds);
    log?.charged(chargedMicro);
    log?.forJob(id);
    const row = log?.carry();
    const commit = () =>
      this.deps.jobs.transaction(async (tx) => {
        if (key.mode === 'live') {
          await this.deps.ledger.charge(tx, {
            accountId: key.accountId,
            key: { id: key.keyId, budgets: key.budgets },
            amountMicro: chargedMicro,
            reference: id,
            model: model.id,
          });
        }
        const inserted = await this.deps.jobs.insert(tx, {
          id,
          accountId: key.accountId,
          apiKeyId: key.keyId,
          testMode: key.mode === 'test',
          model: model.id,
          kind: partial.kind,
          provider,
          spec,
          chargedMicro,
          timeoutSeconds: this.deps.timeoutSeconds,
          log: row,
        });
        // Due now: the first run of the row submits the job.
        await this.deps.queue.schedule(tx, 'video_poll', id, {}, 0);
        return inserted;
      });
    log?.opened();
    let job: VideoJob;
    try {
      job = key.mode === 'live' && this.deps.leases ? await this.deps.leases.chargeBeside(key, chargedMicro, commit) : await commit();
    } catch (err) {
      log?.uncarried();
      throw err;
    } finally {
      log?.settled();
    }
    this.deps.tracing?.noteCall({ creditsMicro: chargedMicro });
    this.deps.nudge();
    // Not awaited: the job is committed and charged, and its answer must not wait for Redis (a
    // publish that fails is delivered to this instance's subscribers; the others re-read on return).
    void this.deps.events.publish({ job }).catch(() => undefined);
    return { job, headers };
  }

  /** The provider that has the job; none when the catalog no longer names its model or route. */
  private providerOf(job: VideoJob): VideoProvider | undefined {
    const model = this.deps.catalog.find(job.model);
    try {
      return model && this.deps.providers.video(model, job.provider, job.routeId).provider;
    } catch {
      return undefined;
    }
  }

  /** A job of the caller's account (any of its keys); another account's job answers 404. */
  async get(accountId: string, jobId: string): Promise<VideoJob> {
    const job = await this.deps.jobs.getOwned(jobId, accountId);
    if (!job) throw notFound(`No video job with id '${jobId}'.`, 'job_not_found', ['id']);
    return this.present(job);
  }

  /**
   * The job as its views show it: a submitted job of a provider that knows its progress without
   * a call (the simulator's timeline) reports it as of now; any other, what its upstream last said.
   */
  present(job: VideoJob): VideoJob {
    if (job.status !== 'PROCESSING' || !job.submittedAt) return job;
    const provider = this.providerOf(job);
    if (!provider?.progressAt) return job;
    return { ...job, progress: provider.progressAt({ submittedAt: job.submittedAt, spec: job.spec }, (this.deps.clock ?? systemClock).now()) };
  }

  async retrieve(key: KeyPrincipal, input: unknown): Promise<VideoJob> {
    const v = parseInput(retrieveSchema, input);
    return this.get(key.accountId, v.id);
  }

  /**
   * The account's jobs changed since `since`: what an account-wide subscription re-reads after the
   * event fan-out came back from an outage. Every subscription of the account asks at the same
   * moment (thousands of sockets, one account), so one read answers all who ask the same.
   */
  changedSince(accountId: string, since: Date): Promise<VideoJob[]> {
    const id = `${accountId}\0${since.getTime()}`;
    let read = this.changedReads.get(id);
    if (!read) {
      read = this.deps.jobs
        .changedSince(accountId, since, MAX_RESYNCED_JOBS)
        .then((jobs) => jobs.map((job) => this.present(job)))
        .finally(() => this.changedReads.delete(id));
      this.changedReads.set(id, read);
    }
    return read;
  }

  /** Newest first unless `order` is asc; `after` a job id (one deleted since still marks its place). */
  async list(
    accountId: string,
    opts: { first?: number; after?: string; status?: VideoJobStatus; order?: 'asc' | 'desc' },
  ): Promise<{ jobs: VideoJob[]; hasNextPage: boolean }> {
    const first = VIDEO_JOB_PAGE.size(opts.first);
    const rows = await this.deps.jobs.list(accountId, { first: first + 1, after: opts.after, status: opts.status, order: opts.order });
    // A cursor that names no job of the account (mistyped, another account's) read as the end of
    // the list; looked up only when the page is empty, so paging costs nothing more.
    if (rows.length === 0 && opts.after && !(await this.deps.jobs.owns(opts.after, accountId))) {
      throw invalidField(['after'], 'it is not the cursor of a job of this account.');
    }
    return { jobs: rows.slice(0, first).map((job) => this.present(job)), hasNextPage: rows.length > first };
  }
}
