import type { VideoJob } from '../video/video-job';

/** A job changed state; published after the transaction that changed it committed. */
export interface JobEvent {
  job: VideoJob;
}

/**
 * The events one subscriber wants: one account's jobs, or one job of that account. A scoped
 * subscriber is only visited by its own events, so an event costs what its own subscribers cost,
 * whatever the number of subscribers elsewhere. Without a scope a listener sees every event.
 */
export interface JobEventScope {
  accountId: string;
  jobId?: string;
}

/**
 * Fan-out of job events to subscribers on every instance: in-process without Redis, Redis
 * pub/sub with it. An event published on any instance reaches each subscriber exactly once.
 */
export interface JobEventBus {
  publish(event: JobEvent): Promise<void>;
  /**
   * Delivery is in publish order but may be spread over several event-loop turns (many
   * subscribers are served in batches): a publish has not necessarily reached every subscriber
   * when it resolves.
   */
  subscribe(listener: (event: JobEvent) => void, scope?: JobEventScope): () => void;
  /**
   * Called after the fan-out came back from an outage (Redis reconnected and resubscribed):
   * events published meanwhile by other instances were lost, so a subscriber re-reads what it
   * watches. `downSince` is when this instance lost the fan-out (by its clock). Buses that cannot
   * lose events never call it.
   */
  onReconnect?(listener: (downSince: Date) => void): () => void;
  close(): Promise<void>;
}
