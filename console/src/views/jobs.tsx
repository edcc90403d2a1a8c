import { useEffect, useRef, useState } from 'preact/hooks';
import type { Client } from 'graphql-ws';
import { execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import { subscribe } from '../api/live';
import type { LiveStatus } from '../api/live-status';
import { JobsUpdatedSubscription, VideoJobsQuery } from '../api/operations';
import type { JobFieldsFragment } from '../gql/graphql';
import { ErrorNote, credits, when } from '../ui';
import { useErrorSlots } from '../error-slots';
import { QueueForm } from './queue-form';

type Job = JobFieldsFragment;
const PAGE = 20;

/** Newest first; a job seen again (an event, a page) replaces the one shown. */
function merge(jobs: Job[], incoming: Job[]): Job[] {
  const byId = new Map(jobs.map((j) => [j.id, j]));
  for (const j of incoming) {
    const known = byId.get(j.id);
    if (!known || known.updatedAt <= j.updatedAt) byId.set(j.id, j);
  }
  return [...byId.values()].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1));
}

function JobCard({ job }: { job: Job }) {
  return (
    <li class="card" aria-label={`Job ${job.id}`} data-job-id={job.id}>
      <div class="row spread">
        <span class="mono">{job.id}</span>
        <span class={`status ${job.status.toLowerCase()}`} data-testid="job-status">
          {job.status}
        </span>
      </div>
      <p>
        {/* A test key's job moves no credit: saying "charged" or "refunded" of it would be untrue. */}
        {job.testMode ? `${job.model} · test key, free (${credits(job.creditsCharged)} with a live key)` : `${job.model} · charged ${credits(job.creditsCharged)}`}
        {!job.testMode && job.creditsUsed !== null && job.creditsUsed !== undefined ? ` · used ${credits(job.creditsUsed)}` : ''} · {when(job.createdAt)}
      </p>
      {/* Metadata only until played: a page of finished jobs must not download every video. */}
      {job.status === 'COMPLETED' && job.url && <video controls preload="metadata" playsInline src={job.url} aria-label={`Video of job ${job.id}`} />}
      {job.status === 'FAILED' && (
        <p class="error">
          Failed: {(job.reason ?? 'unknown reason').replace(/\.$/, '')}.{job.testMode ? '' : ` Refunded ${credits(job.creditsCharged)}.`}
        </p>
      )}
    </li>
  );
}

/** The account's video and motion-control jobs, live over videoJobsUpdated, with the queue form. */
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

  return (
    <div class="stack">
      <QueueForm token={token} queueKey={queueKey} askForKey={ownerView} onQueued={(job) => setJobs((js) => merge(js, [job]))} />
      <section aria-labelledby="jobs-heading">
        <h2 id="jobs-heading">Jobs, newest first</h2>
        <ErrorNote message={errors.message} />
        {loaded && jobs.length === 0 && <p>No jobs yet.</p>}
        <ul class="cards" aria-label="Video jobs">
          {jobs.map((j) => (
            <JobCard key={j.id} job={j} />
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
