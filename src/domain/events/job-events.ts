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
  /**
   * Called after the fan-out came back from an outage (Redis reconnected and resubscribed):
   * events published meanwhile by other instances were lost, so a subscriber re-reads what it
   * watches. Buses that cannot lose events never call it.
   */
  onReconnect?(listener: () => void): () => void;
  close(): Promise<void>;
}
