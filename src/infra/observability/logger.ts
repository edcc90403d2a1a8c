import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Anything that could carry a credential is redacted at the source, so a
 * key, ID token, webhook secret or admin token can never reach a log line.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: undefined,
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
