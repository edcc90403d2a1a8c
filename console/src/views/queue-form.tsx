import { useEffect, useState } from 'preact/hooks';
import { execute, describeError } from '../api/client';
import { QueueVideoMutation, VideoQuoteQuery } from '../api/operations';
import type { JobFieldsFragment, VideoQuoteQuery as QuoteResult } from '../gql/graphql';
import { ErrorNote } from '../ui';
import { loadModels } from './models';

type Quote = QuoteResult['videoQuote'];
const usd = (n: number) => n.toLocaleString('en-US', { style: 'currency', currency: 'USD' });

/** Quote, then queue, a video with an API key (the pasted one, or one created in this tab). */
export function QueueForm({ token, queueKey, askForKey, onQueued }: { token: string; queueKey: string | null; askForKey: boolean; onQueued: (job: JobFieldsFragment) => void }) {
  const [videoModels, setVideoModels] = useState<string[]>([]);
  const [key, setKey] = useState(queueKey ?? '');
  const [model, setModel] = useState('');
  const [prompt, setPrompt] = useState('');
  const [duration, setDuration] = useState('5s');
  const [resolution, setResolution] = useState('720p');
  const [aspectRatio, setAspectRatio] = useState('16:9');
  const [audio, setAudio] = useState(false);
  const [imageUrl, setImageUrl] = useState('');
  const [references, setReferences] = useState('');
  const [quote, setQuote] = useState<Quote | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => setKey(queueKey ?? ''), [queueKey]);
  useEffect(() => {
    loadModels(token).then((ms) => {
      const ids = ms.filter((m) => m.capabilities.includes('video')).map((m) => m.id);
      setVideoModels(ids);
      setModel((current) => current || ids.find((id) => id.includes('text-to-video')) || ids[0] || '');
    }, (e) => setError(describeError(e)));
  }, [token]);
  // A quote belongs to the settings it was made for.
  useEffect(() => setQuote(null), [model, duration, resolution, key]);

  const needsImage = model.includes('image-to-video');
  const needsReferences = model.includes('reference-to-video');
  const credential = askForKey ? key.trim() : token;

  const getQuote = async () => {
    setError(null);
    if (!credential) return setError('Queueing and quoting need an API key: create one under Keys, or paste one here.');
    try {
      setQuote((await execute(credential, VideoQuoteQuery, { input: { model, duration, resolution } })).videoQuote);
    } catch (err) {
      setError(describeError(err));
    }
  };

  const queue = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const refs = references.split(/\s+/).filter(Boolean);
      const { queueVideo } = await execute(credential, QueueVideoMutation, {
        input: {
          model,
          prompt: prompt.trim() || null,
          duration,
          resolution,
          aspectRatio,
          audio,
          imageUrl: needsImage ? imageUrl.trim() || null : null,
          referenceImageUrls: needsReferences && refs.length ? refs : null,
        },
      });
      onQueued(queueVideo);
      setQuote(null);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="queue-heading">
      <h2 id="queue-heading">Queue a video</h2>
      <form onSubmit={queue} class="grid">
        {askForKey && (
          <div class="field">
            <label for="queue-key">API key for queueing</label>
            <input id="queue-key" type="password" autoComplete="off" value={key} maxLength={200} onInput={(e) => setKey(e.currentTarget.value)} />
          </div>
        )}
        <div class="field">
          <label for="queue-model">Model</label>
          <select id="queue-model" value={model} onChange={(e) => setModel(e.currentTarget.value)}>
            {videoModels.map((id) => (
              <option value={id}>{id}</option>
            ))}
          </select>
        </div>
        <div class="field wide">
          <label for="queue-prompt">Prompt</label>
          <textarea id="queue-prompt" rows={3} maxLength={5000} value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} />
        </div>
        {needsImage && (
          <div class="field wide">
            <label for="queue-image">Image URL</label>
            <input id="queue-image" type="url" value={imageUrl} onInput={(e) => setImageUrl(e.currentTarget.value)} />
          </div>
        )}
        {needsReferences && (
          <div class="field wide">
            <label for="queue-refs">Reference image URLs (one per line, up to 4)</label>
            <textarea id="queue-refs" rows={2} value={references} onInput={(e) => setReferences(e.currentTarget.value)} />
          </div>
        )}
        <div class="field">
          <label for="queue-duration">Duration</label>
          <select id="queue-duration" value={duration} onChange={(e) => setDuration(e.currentTarget.value)}>
            <option>5s</option>
            <option>10s</option>
          </select>
        </div>
        <div class="field">
          <label for="queue-resolution">Resolution</label>
          <select id="queue-resolution" value={resolution} onChange={(e) => setResolution(e.currentTarget.value)}>
            <option>480p</option>
            <option>720p</option>
            <option>1080p</option>
          </select>
        </div>
        <div class="field">
          <label for="queue-aspect">Aspect ratio</label>
          <select id="queue-aspect" value={aspectRatio} onChange={(e) => setAspectRatio(e.currentTarget.value)}>
            {['16:9', '9:16', '1:1', '4:3', '3:4'].map((a) => (
              <option>{a}</option>
            ))}
          </select>
        </div>
        <label class="inline field">
          <input type="checkbox" checked={audio} onChange={(e) => setAudio(e.currentTarget.checked)} /> Background audio
        </label>
        {quote && (
          <p class="quote wide" role="status">
            Quote: <strong>{quote.credits} credits</strong> ({usd(quote.estimatedCostUsd.nonMember)}; members {usd(quote.estimatedCostUsd.member)})
          </p>
        )}
        <ErrorNote message={error} />
        <div class="row wide">
          <button type="button" class="secondary" onClick={getQuote}>
            Get quote
          </button>
          <button type="submit" disabled={!quote || busy}>
            Queue video
          </button>
        </div>
      </form>
    </section>
  );
}
