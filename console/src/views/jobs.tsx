import { useEffect, useRef, useState } from 'preact/hooks';
import type { Client } from 'graphql-ws';
import { execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import { subscribe } from '../api/live';
import type { LiveStatus } from '../api/live-status';
import { CancelVideoJobMutation, JobsUpdatedSubscription, VideoJobsQuery } from '../api/operations';
import type { JobFieldsFragment } from '../gql/graphql';
import { ErrorNote } from '../ui';
import { useErrorSlots } from '../error-slots';
import { QueueForm } from './queue-form';
import { JobCard } from './job-card';

type Job = JobFieldsFragment;
const PAGE = 20;
/** How often running jobs are read again for their progress (an event comes only with a change of state or an upstream's report). */
const PROGRESS_EVERY_MS = 2_000;

/** Newest first; a job seen again (an event, a page) replaces the one shown. */
function merge(jobs: Job[], incoming: Job[]): Job[] {
  const byId = new Map(jobs.map((j) => [j.id, j]));
  for (const j of incoming) {
    const known = byId.get(j.id);
    if (!known || known.updatedAt <= j.updatedAt) byId.set(j.id, j);
  }
  return [...byId.values()].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1));
}

/**
 * The account's video and motion-control jobs, live over videoJobsUpdated, with the queue form;
 * while some run, their progress is read again every two seconds.
 */
export function Jobs({ token, live, liveStatus, queueKey, ownerView }: { token: Bearer; live: Client; liveStatus: LiveStatus; queueKey: string | null; ownerView: boolean }) {
  const [jobs, setJobs] = useState<Job[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [more, setMore] = useState(false);
  const [loaded, setLoaded] = useState(false);
  const errors = useErrorSlots();
  // Set once the first page has been read: reading it again (after a reconnection) only merges,
  // keeping how far the list was paged (its cursor, whether more follow).
  const paged = useRef(false);

  // The first page or a later one: one kind of request, so any page that loads clears a page's error.
  const page = async (after: string | null) => {
    try {
      const { videoJobs } = await execute(token, VideoJobsQuery, { first: PAGE, after });
      setJobs((js) => merge(js, videoJobs.edges.map((e) => e.node)));
      if (after !== null || !paged.current) {
        setCursor(videoJobs.pageInfo.endCursor ?? null);
        setMore(videoJobs.pageInfo.hasNextPage);
      }
      paged.current = true;
      setLoaded(true);
      errors.succeeded('page');
    } catch (err) {
      errors.failed('page')(err);
    }
  };
  // Live changes merge into the list; each time the socket (re)connects the first page is read
  // again, once the subscription is on, so changes made while it was down (or before it first
  // connected) are not missed.
  useEffect(() => subscribe(live, JobsUpdatedSubscription, (d) => setJobs((js) => merge(js, [d.videoJobsUpdated])), (m) => errors.set('live', m)), [live]);
  useEffect(
    () =>
      live.on('connected', () => {
        errors.set('live', null);
        void page(null);
      }),
    [live],
  );
  // On opening: read at once when the socket is up already (or down: over HTTP meanwhile). While it
  // is connecting, its 'connected' reads, so the first page is not read twice; should that
  // connection fail, the page is read all the same.
  useEffect(() => {
    if (liveStatus.get() !== 'connecting') void page(null);
    return liveStatus.listen((state) => {
      if (state === 'down' && !paged.current) void page(null);
    });
  }, [token, liveStatus]);

  const running = jobs.some((j) => j.status === 'PROCESSING');
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => {
      execute(token, VideoJobsQuery, { first: 100, status: 'PROCESSING' }).then(({ videoJobs }) => {
        setJobs((js) => merge(js, videoJobs.edges.map((e) => e.node)));
        errors.succeeded('progress');
      }, errors.failed('progress'));
    }, PROGRESS_EVERY_MS);
    return () => clearInterval(timer);
  }, [running, token]);

  // A job that ended meanwhile answers video_not_cancellable: its message shows, and its end arrives live.
  const cancel = async (job: Job) => {
    try {
      const { cancelVideoJob } = await execute(token, CancelVideoJobMutation, { id: job.id });
      setJobs((js) => merge(js, [cancelVideoJob]));
      errors.succeeded('cancel');
    } catch (err) {
      errors.failed('cancel')(err);
    }
  };

  return (
    <div class="stack">
      <QueueForm token={token} queueKey={queueKey} askForKey={ownerView} onQueued={(job) => setJobs((js) => merge(js, [job]))} />
      <section aria-labelledby="jobs-heading">
        <h2 id="jobs-heading">Jobs, newest first</h2>
        <ErrorNote message={errors.message} />
        {loaded && jobs.length === 0 && <p>No jobs yet.</p>}
        <ul class="cards" aria-label="Video jobs">
          {jobs.map((j) => (
            <JobCard key={j.id} job={j} onCancel={cancel} />
          ))}
        </ul>
        {more && (
          <button type="button" class="secondary" onClick={() => page(cursor)}>
            Load more jobs
          </button>
        )}
      </section>
    </div>
  );
}
