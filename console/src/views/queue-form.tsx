import { useEffect, useState } from 'preact/hooks';
import { execute, describeError } from '../api/client';
import type { Bearer } from '../api/bearer';
import { useIdempotencyKey } from '../api/idempotency';
import { QueueMotionControlMutation, QueueVideoMutation, VideoQuoteQuery } from '../api/operations';
import type { JobFieldsFragment, VideoQuoteQuery as QuoteResult } from '../gql/graphql';
import { ErrorNote, useOneAtATime } from '../ui';
import { loadModels } from './models';
import { durationProblem, MOTION_DEFAULTS, MotionFields, motionInput, motionQuoteInput, type MotionValues } from './motion-fields';
import { VIDEO_DEFAULTS, VideoFields, videoInput, videoQuoteInput, type VideoValues } from './video-fields';

type Quote = QuoteResult['videoQuote'];
type Kind = 'video' | 'motion';
const usd = (n: number) => n.toLocaleString('en-US', { style: 'currency', currency: 'USD' });

/** Quote, then queue, a video or a motion-control job with an API key (the pasted one, or one created in this tab). */
export function QueueForm({ token, queueKey, askForKey, onQueued }: { token: Bearer; queueKey: string | null; askForKey: boolean; onQueued: (job: JobFieldsFragment) => void }) {
  const [videoModels, setVideoModels] = useState<string[]>([]);
  const [motionModel, setMotionModel] = useState<string | null>(null);
  const [key, setKey] = useState(queueKey ?? '');
  const [kind, setKind] = useState<Kind>('video');
  const [video, setVideo] = useState<VideoValues>(VIDEO_DEFAULTS);
  const [motion, setMotion] = useState<MotionValues>(MOTION_DEFAULTS);
  // A quote is shown only for the settings (and key) it was made for.
  const [quote, setQuote] = useState<{ for: string; quote: Quote } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { busy, once } = useOneAtATime();
  const idempotency = useIdempotencyKey();

  useEffect(() => setKey(queueKey ?? ''), [queueKey]);
  useEffect(() => {
    loadModels(token).then((ms) => {
      const ids = ms.filter((m) => m.capabilities.includes('video')).map((m) => m.id);
      setVideoModels(ids);
      setVideo((v) => (v.model ? v : { ...v, model: ids.find((id) => id.includes('text-to-video')) || ids[0] || '' }));
      setMotionModel(ms.find((m) => m.capabilities.includes('motion-control'))?.id ?? null);
    }, (e) => setError(describeError(e)));
  }, [token]);

  const credential = askForKey ? key.trim() : token;
  const motionKind = kind === 'motion' && motionModel !== null;
  const quoteInput = motionKind ? motionQuoteInput(motionModel, motion) : videoQuoteInput(video);
  // The signed-in owner's token is renewed in place: it is one credential for the quote's sake.
  const quoteFor = JSON.stringify([typeof credential === 'string' ? credential : 'signed-in', quoteInput]);
  const shown = quote?.for === quoteFor ? quote.quote : null;

  const choose = (k: Kind) => {
    setKind(k);
    setError(null);
  };

  const getQuote = async () => {
    setError(null);
    if (!credential) return setError('Queueing and quoting need an API key: create one under Keys, or paste one here.');
    // Said here, in words: sent as typed, 2.5 came back as the GraphQL engine's "Int cannot represent non-integer value".
    const problem = motionKind ? durationProblem(motion.durationSeconds) : null;
    if (problem) return setError(problem);
    try {
      setQuote({ for: quoteFor, quote: (await execute(credential, VideoQuoteQuery, { input: quoteInput })).videoQuote });
    } catch (err) {
      setError(describeError(err));
    }
  };

  /** The job as the gateway answers it; the idempotency key follows the operation and its input. */
  const send = async (): Promise<JobFieldsFragment> => {
    if (motionKind) {
      const input = motionInput(motion);
      const idempotencyKey = idempotency.keyFor(JSON.stringify(['queueMotionControl', input]));
      return (await execute(credential, QueueMotionControlMutation, { input, idempotencyKey })).queueMotionControl;
    }
    const input = videoInput(video);
    const idempotencyKey = idempotency.keyFor(JSON.stringify(['queueVideo', input]));
    return (await execute(credential, QueueVideoMutation, { input, idempotencyKey })).queueVideo;
  };

  const queue = (e: Event) => {
    e.preventDefault();
    // Enter before a quote asks for one (the quote button is the form's default then).
    if (!shown) return void getQuote();
    return once(async () => {
      setError(null);
      try {
        const job = await send();
        idempotency.settle();
        onQueued(job);
        setQuote(null);
      } catch (err) {
        idempotency.settle(err);
        setError(describeError(err));
      }
    });
  };

  return (
    <section class="card" aria-labelledby="queue-heading">
      <h2 id="queue-heading">Queue a job</h2>
      <form onSubmit={queue} class="grid">
        {askForKey && (
          <div class="field">
            <label for="queue-key">API key for queueing</label>
            <input id="queue-key" type="password" autoComplete="off" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
          </div>
        )}
        {motionModel && (
          <fieldset class="field">
            <legend>Job type</legend>
            <div>
              <label class="inline">
                <input type="radio" name="queue-kind" value="video" checked={kind === 'video'} onChange={() => choose('video')} /> Video
              </label>
              <label class="inline">
                <input type="radio" name="queue-kind" value="motion" checked={kind === 'motion'} onChange={() => choose('motion')} /> Motion control
              </label>
            </div>
          </fieldset>
        )}
        {motionKind ? (
          <MotionFields values={motion} onChange={(patch) => setMotion((m) => ({ ...m, ...patch }))} />
        ) : (
          <VideoFields models={videoModels} values={video} onChange={(patch) => setVideo((v) => ({ ...v, ...patch }))} />
        )}
        {shown && (
          <p class="quote wide" role="status">
            Quote: <strong>{shown.credits} credits</strong> ({usd(shown.estimatedCostUsd.nonMember)}; members {usd(shown.estimatedCostUsd.member)})
          </p>
        )}
        <ErrorNote message={error} />
        <div class="row wide">
          {/* The form's default button (Enter) until there is a quote, then Queue is. */}
          {/* formNoValidate: a quote needs only the fields it prices, not the URLs the queueing needs. */}
          <button type={shown ? 'button' : 'submit'} formNoValidate class="secondary" onClick={shown ? getQuote : undefined}>
            Get quote
          </button>
          <button type="submit" disabled={!shown || busy}>
            {motionKind ? 'Queue motion control' : 'Queue video'}
          </button>
        </div>
      </form>
    </section>
  );
}
