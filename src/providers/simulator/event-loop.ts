/** Lets other requests run between two images: a 2048x2048 batch would otherwise hold the event loop. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
