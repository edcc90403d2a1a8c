import type Redis from 'ioredis';

/**
 * Closes an ioredis connection and answers once it has ended (its socket closed). `disconnect()`
 * alone ends the socket and leaves ioredis's 2 s destroy timer running until the server's close
 * arrives; a test file that then shuts its redis-server down kept the jest worker alive past
 * the file ("failed to exit gracefully"). `close` is how to close it (default: QUIT, so Redis
 * closes it; disconnect() if QUIT cannot be sent). A connection still reconnecting has no socket
 * whose close would end it: wait until it is ready first.
 */
export async function closedRedis(c: Redis, close: () => unknown = () => c.quit().catch(() => c.disconnect())): Promise<void> {
  if (c.status === 'end') return;
  const ended = new Promise<void>((resolve) => c.once('end', () => resolve()));
  await close();
  await ended;
}
