import type { JobFieldsFragment } from '../gql/graphql';
import { credits, when } from '../ui';
import { ConfirmButton } from './confirm-button';

type Job = JobFieldsFragment;

/** How far a PROCESSING job is, as its upstream (or the simulator's clock) last said. */
function ProgressBar({ job }: { job: Job }) {
  return (
    <div class="row progress-row">
      <progress max={100} value={job.progress} aria-label={`Progress of job ${job.id}`} />
      <span class="progress-figure">{job.progress}%</span>
    </div>
  );
}

/**
 * One job: its state, its money, a progress bar and a Cancel button (with a confirmation) while
 * it runs, the video once it completed, the reason and refund once it failed.
 */
export function JobCard({ job, onCancel }: { job: Job; onCancel: (job: Job) => Promise<void> }) {
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
      {job.status === 'PROCESSING' && (
        <div class="row spread">
          <ProgressBar job={job} />
          <ConfirmButton
            label="Cancel job"
            confirmLabel={job.testMode ? 'Cancel it' : `Cancel it (refunds ${credits(job.creditsCharged)})`}
            dismissLabel="Keep it running"
            secondary
            onConfirm={() => onCancel(job)}
          />
        </div>
      )}
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
