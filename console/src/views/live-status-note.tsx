import { useEffect, useState } from 'preact/hooks';
import type { LiveStatus } from '../api/live-status';

/** A lost socket that comes back within this is not worth a word (a renewed sign-in reconnects at once). */
const GRACE_MS = 1000;

/**
 * Says so while the live socket is down and graphql-ws is retrying: the page's jobs and balance are
 * then not updated by themselves. The live region is always in the page (announced when its text
 * changes); the views read their data again once it reconnects.
 */
export function LiveStatusNote({ status }: { status: LiveStatus }) {
  const [paused, setPaused] = useState(false);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const follow = (state: string) => {
      clearTimeout(timer);
      if (state === 'down') timer = setTimeout(() => setPaused(true), GRACE_MS);
      else setPaused(false);
    };
    follow(status.get());
    const stop = status.listen(follow);
    return () => {
      stop();
      clearTimeout(timer);
    };
  }, [status]);
  return (
    <p class={paused ? 'live-paused' : 'live-paused empty'} role="status">
      {paused ? 'Live updates paused — reconnecting…' : ''}
    </p>
  );
}
