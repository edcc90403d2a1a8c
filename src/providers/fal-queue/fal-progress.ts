/**
 * How far a fal request is, from its status answer: a request still in the queue is at 0%
 * (whatever its `queue_position`); a running one at the last percentage its logs printed
 * (`Generating: 45%`, tqdm's ` 45%|████▌ | 9/20`), undefined when they printed none.
 */

/** Only the last messages matter, and a long log should not cost a long scan. */
const TAIL_MESSAGES = 20;

export function progressOfStatus(answer: unknown): number | undefined {
  const { status, logs } = (answer ?? {}) as { status?: unknown; logs?: unknown };
  if (status === 'IN_QUEUE') return 0;
  if (!Array.isArray(logs)) return undefined;
  for (const entry of logs.slice(-TAIL_MESSAGES).reverse()) {
    const message = (entry as { message?: unknown } | null)?.message;
    if (typeof message !== 'string') continue;
    const percentages = [...message.matchAll(/(\d{1,3}(?:\.\d+)?)\s?%/g)];
    const last = percentages.at(-1);
    if (last) return Math.min(100, Math.floor(Number(last[1])));
  }
  return undefined;
}
