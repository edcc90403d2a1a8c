import type Redis from 'ioredis';
import type { JobEvent, JobEventBus } from '../../domain/events/job-events';
import type { VideoJob } from '../../domain/video/video-job';
import { LocalJobEventBus } from './local-event-bus';

const CHANNEL = 'svc:video-job-events';

/** Dates travel as ISO strings; revive them so subscribers see the same VideoJob as locally. */
function revive(raw: string): JobEvent {
  const parsed = JSON.parse(raw) as { job: Record<string, unknown> };
  const job = parsed.job;
  for (const k of ['submittedAt', 'deadlineAt', 'createdAt', 'updatedAt']) {
    if (typeof job[k] === 'string') job[k] = new Date(job[k] as string);
  }
  return { job: job as unknown as VideoJob };
}

/**
 * Every instance publishes to one Redis channel and delivers what it receives to its local
 * subscribers, so each subscriber sees each event once whichever instance did the work.
 */
export class RedisJobEventBus implements JobEventBus {
  private readonly local = new LocalJobEventBus();
  private readonly subscriber: Redis;

  constructor(private readonly publisher: Redis) {
    this.subscriber = publisher.duplicate({ connectionName: 'svc-gateway-events' });
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel === CHANNEL) void this.local.publish(revive(message));
    });
    void this.subscriber.subscribe(CHANNEL);
  }

  async publish(event: JobEvent): Promise<void> {
    await this.publisher.publish(CHANNEL, JSON.stringify(event));
  }

  subscribe(listener: (event: JobEvent) => void): () => void {
    return this.local.subscribe(listener);
  }

  async close(): Promise<void> {
    await this.local.close();
    this.subscriber.disconnect();
  }
}
