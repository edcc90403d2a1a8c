/**
 * The video domain wired on in-memory fakes, as services.ts wires it on the database: the
 * service, its finisher and worker handlers, the owner's controls, and one upstream whose poll
 * answer, progress and cancel the test decides.
 */
import { NO_BUDGETS } from '../../../src/domain/credits/budgets';
import { Catalog } from '../../../src/domain/catalog/catalog';
import type { JobEvent, JobEventBus } from '../../../src/domain/events/job-events';
import type { KeyPrincipal } from '../../../src/domain/keys/principal';
import { JobFinisher } from '../../../src/domain/video/job-finisher';
import { VideoJobRunner } from '../../../src/domain/video/video-job-runner';
import { VideoControls } from '../../../src/domain/video/video-controls';
import type { SubmittedJob, VideoPollResult, VideoProvider, VideoProviders } from '../../../src/domain/video/video-port';
import { VideoService } from '../../../src/domain/video/video-service';
import { systemClock } from '../../../src/domain/shared/system-clock';
import { FakeDatabase } from './fake-database';
import { FakeMediaLibrary } from './media-library';
import { FakeVideoJobRepository } from './fake-video-jobs';
import { FakeVideoLedger } from './fake-video-ledger';
import { FakeWebhookRepository } from './fake-webhooks';
import { FakeWorkQueue } from './fake-work-queue';

export const TIMEOUT_SECONDS = 900;
export const FIRST_POLL_SECONDS = 30;
export const TEXT_TO_VIDEO = 'svc-2.5-preview-text-to-video';

export function keyOf(accountId: string, mode: 'live' | 'test' = 'live', keyId = `key_${accountId}`): KeyPrincipal {
  return { kind: 'key', keyId, accountId, mode, allowedModels: null, blockedModels: null, budgets: NO_BUDGETS };
}

export function videoDomain(
  options: { upstream?: Partial<VideoProvider>; /** Awaited by each submission before it answers. */ submitGate?: () => Promise<void> } = {},
) {
  const db = new FakeDatabase();
  const jobs = new FakeVideoJobRepository(db);
  const queue = new FakeWorkQueue(db);
  const webhooks = new FakeWebhookRepository(db);
  const ledger = new FakeVideoLedger(db);
  const media = new FakeMediaLibrary();
  const published: JobEvent[] = [];
  const events: JobEventBus = {
    publish: async (e) => void published.push(e),
    subscribe: () => () => undefined,
    close: async () => undefined,
  };
  const submitted: string[] = [];
  const cancelled: SubmittedJob[] = [];
  let pollAnswer: VideoPollResult = { state: 'processing' };
  const provider: VideoProvider = {
    submit: async (spec) => ({ queueId: `q_${spec.jobId}` }),
    poll: async () => pollAnswer,
    cancel: async (job) => void cancelled.push(job),
    ...options.upstream,
  };
  const providers: VideoProviders = {
    providerName: (_model, mode) => (mode === 'test' ? 'simulator' : 'upstream'),
    video: () => ({ provider, upstreamModel: 'upstream-model' }),
    submitVideo: async (_model, _provider, spec) => {
      submitted.push(spec.jobId);
      await options.submitGate?.();
      return { queueId: `q_${spec.jobId}`, routeId: 'route-0' };
    },
  };
  const catalog = Catalog.load();
  let nudged = 0;
  const video = new VideoService({
    catalog,
    providers,
    limiter: { consume: async () => ({ allowed: true, limit: 5, remaining: 4, resetSeconds: 60 }) },
    urls: { checkMediaUrl: async (url) => String(url), checkWebhookUrl: async (url) => String(url) },
    jobs,
    queue,
    events,
    timeoutSeconds: TIMEOUT_SECONDS,
    nudge: () => void nudged++,
    ledger,
    clock: { ...systemClock, now: () => db.nowMs },
  });
  const finisher = new JobFinisher(jobs, queue, webhooks, events, ledger);
  const runner = new VideoJobRunner({
    catalog,
    providers,
    jobs,
    queue,
    finisher,
    media: media.asLibrary(),
    events,
    pollEverySeconds: () => 5,
    firstPollSeconds: () => FIRST_POLL_SECONDS,
  });
  const controls = new VideoControls({ video, jobs, finisher, media: media.asLibrary(), nudge: () => void nudged++ });
  /** Runs the worker's due rows once, as the worker would. */
  const runDue = async () => {
    for (const item of await queue.claim(10)) {
      if (item.kind === 'video_poll') await runner.handle(item);
      if (item.kind === 'video_cancel') await runner.cancelUpstream(item);
    }
  };
  return {
    db,
    jobs,
    queue,
    webhooks,
    ledger,
    media,
    video,
    finisher,
    runner,
    controls,
    published,
    submitted,
    cancelled,
    runDue,
    nudges: () => nudged,
    answerPolls: (answer: VideoPollResult) => (pollAnswer = answer),
  };
}
