import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Anything that could carry a credential is redacted at the source, so a
 * key, ID token, webhook secret or admin token can never reach a log line. With tracing on,
 * `traceIds` adds the current span's `trace_id` and `span_id` to each line logged inside one.
 */
export function createLogger(level: string, traceIds?: () => Record<string, string>): Logger {
  return pino({
    level,
    base: undefined,
    ...(traceIds ? { mixin: traceIds } : {}),
    redact: {
      paths: [
        'req.headers.authorization',
        'headers.authorization',
        'authorization',
        '*.authorization',
        'secret',
        '*.secret',
        'key',
        '*.key',
        'token',
        '*.token',
        'webhookSecret',
      ],
      censor: '[redacted]',
    },
  });
}
