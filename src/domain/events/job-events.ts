import type { VideoJob } from '../video/video-job';

/** A job changed state; published after the transaction that changed it committed. */
export interface JobEvent {
  job: VideoJob;
}

/**
 * Fan-out of job events to subscribers on every instance: in-process without Redis, Redis
 * pub/sub with it. An event published on any instance reaches each subscriber exactly once.
 */
export interface JobEventBus {
  publish(event: JobEvent): Promise<void>;
  subscribe(listener: (event: JobEvent) => void): () => void;
  close(): Promise<void>;
}
