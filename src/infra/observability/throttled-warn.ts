import type { Logger } from './logger';
import { monotonicMillis } from '../../domain/shared/time';

/**
 * A warning that can fire thousands of times a second during an outage (every request falling
 * back) is logged at most once per `everyMs` per topic, with how many times it happened since.
 */
export function throttledWarn(logger: Logger, everyMs = 10_000): (topic: string, obj: object, msg: string) => void {
  const last = new Map<string, { at: number; suppressed: number }>();
  return (topic, obj, msg) => {
    const now = monotonicMillis();
    const seen = last.get(topic);
    if (seen && now - seen.at < everyMs) {
      seen.suppressed++;
      return;
    }
    logger.warn({ ...obj, topic, suppressedSinceLast: seen?.suppressed ?? 0 }, msg);
    last.set(topic, { at: now, suppressed: 0 });
  };
}
