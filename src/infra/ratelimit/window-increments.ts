import type Redis from 'ioredis';

/**
 * Adds one to each counter (KEYS); a new one starts its window (expires in ARGV[1] ms). Answers
 * each counter's count and the milliseconds its window has left, in pairs. The keys and values
 * are those rate-limiter-flexible wrote (`rl:<group>:<key>`, an integer with an expiry), so an
 * instance of the earlier build counts in the same windows during a rolling upgrade.
 */
const INCR_EACH = `local out = {}
for i, key in ipairs(KEYS) do
  local n = redis.call('INCR', key)
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then
    redis.call('PEXPIRE', key, ARGV[1])
    ttl = tonumber(ARGV[1])
  end
  out[2 * i - 1] = n
  out[2 * i] = ttl
end
return out`;

/** The script as a command: the counters' keys, then the window's length in ms; answers [count, ms left] pairs. */
export type IncrEach = (keyCount: number, ...args: Array<string | number>) => Promise<number[]>;

/** Defines the script on `redis` (ioredis loads it once and calls it by its SHA) and answers it as a function. */
export function windowIncrements(redis: Redis): IncrEach {
  redis.defineCommand('svcRateIncrEach', { lua: INCR_EACH });
  return (redis as unknown as { svcRateIncrEach: IncrEach }).svcRateIncrEach.bind(redis);
}
