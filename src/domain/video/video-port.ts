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

export type VideoPollResult = { state: 'processing' } | { state: 'completed'; video: GeneratedImage } | { state: 'failed'; reason: string };

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
