/**
 * The video capability as the domain sees it; providers implement VideoProvider, and the
 * composition root supplies a VideoProviders.
 */
import type { CatalogModel } from '../catalog/model';
import type { GeneratedImage } from '../images/image-port';

export interface VideoJobSpec {
  jobId: string;
  upstreamModel: string;
  kind: 'video' | 'motion-control';
  prompt?: string;
  durationSeconds: number;
  resolution?: '480p' | '720p' | '1080p';
  aspectRatio?: string;
  audio?: boolean;
  imageUrl?: string;
  referenceImageUrls?: string[];
  videoUrl?: string;
  keepOriginalSound?: boolean;
  characterOrientation?: 'image' | 'video';
}

/**
 * Where an upstream job is. A processing job may say how far it is (`progress`, 0 to 100, from the
 * upstream's logs or queue); a completed one may come with a still of it (`thumbnail`, an image).
 */
export type VideoPollResult =
  { state: 'processing'; progress?: number } | { state: 'completed'; video: GeneratedImage; thumbnail?: GeneratedImage } | { state: 'failed'; reason: string };

/** What an upstream needs to find a submitted job again: its queue id, and the spec it was given. */
export interface SubmittedJob {
  queueId: string;
  spec: VideoJobSpec;
}

export interface VideoProvider {
  /** Hands the job to the provider; returns the provider's queue id. */
  submit(spec: VideoJobSpec): Promise<{ queueId: string }>;
  /**
   * True when submitting the same job again creates nothing new (same queue id, no upstream
   * side effect), so a submission whose confirmation was lost in a crash may simply be repeated.
   * Otherwise such a job fails with a refund rather than risk a second submission.
   */
  readonly submitIsRepeatable?: boolean;
  /**
   * Asks where the job is. Stateless on our side: everything needed is passed in, so a
   * restarted gateway can poll a job submitted before the crash.
   */
  poll(job: { queueId: string; submittedAt: Date; spec: VideoJobSpec }): Promise<VideoPollResult>;
  /**
   * Asks the upstream to stop a job (its cancel call): resolves once the upstream answered, a job
   * it already finished included; throws when it could not be reached, to be asked again.
   */
  cancel?(job: SubmittedJob): Promise<void>;
  /**
   * How far a submitted job is at `nowMs`, 0 to 99, known without asking anyone (the simulator's
   * timeline). A provider without it reports progress through its polls.
   */
  progressAt?(job: { submittedAt: Date; spec: VideoJobSpec }, nowMs: number): number;
}

export interface VideoProviders {
  /** The provider's name stored with a job, so a restarted gateway polls the same provider. */
  providerName(model: CatalogModel, mode: 'live' | 'test'): string;
  /**
   * The provider that has a job (the route that accepted it, `routeId`; before its submission,
   * the model's first route), with the model id that route knows it by.
   */
  video(model: CatalogModel, providerName: string, routeId?: string | null): { provider: VideoProvider; upstreamModel: string };
  /** Submits over the model's routes; failover only where the upstream surely did not take the job. */
  submitVideo(model: CatalogModel, providerName: string, spec: VideoJobSpec): Promise<{ queueId: string; routeId: string | null }>;
}
