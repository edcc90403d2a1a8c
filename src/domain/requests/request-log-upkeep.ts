/**
 * The request log's partitions, kept on the clock: at start and every hour, the partitions of
 * today (the clock's UTC day) and the next PARTITION_DAYS_AHEAD days are made and those older
 * than REQUEST_LOG_DAYS dropped (svc_request_log_partitions). Every instance runs it; the
 * database takes them one at a time and each pass does only what is left to do. A pass that
 * fails is reported and the next one tries again; a row whose day has no partition meanwhile
 * lands in the default partition and is moved when its day's partition is made.
 */
import type { Clock, TimerHandle } from '../ports/clock';
import { utcDay } from '../shared/time';
import type { PartitionUpkeep, RequestLogRepository } from './request-log-repository';

export const PARTITION_DAYS_AHEAD = 2;
export const PARTITION_UPKEEP_MS = 3_600_000;

export class RequestLogUpkeep {
  private timer: TimerHandle | undefined;

  constructor(
    private readonly repository: Pick<RequestLogRepository, 'keepPartitions'>,
    private readonly clock: Clock,
    private readonly keepDays: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  async start(): Promise<void> {
    this.timer ??= this.clock.setInterval(() => void this.pass().catch(this.onError), PARTITION_UPKEEP_MS).unref();
    await this.pass().catch(this.onError);
  }

  stop(): void {
    this.clock.clearInterval(this.timer);
    this.timer = undefined;
  }

  pass(): Promise<PartitionUpkeep> {
    return this.repository.keepPartitions(utcDay(new Date(this.clock.now())), PARTITION_DAYS_AHEAD, this.keepDays);
  }
}
