import { EventEmitter } from 'node:events';
import type { JobEvent, JobEventBus } from '../../domain/events/job-events';

/** One process: an EventEmitter (no limit on listeners: every subscription is one). */
export class LocalJobEventBus implements JobEventBus {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  async publish(event: JobEvent): Promise<void> {
    this.emitter.emit('job', event);
  }

  subscribe(listener: (event: JobEvent) => void): () => void {
    this.emitter.on('job', listener);
    return () => this.emitter.off('job', listener);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}
