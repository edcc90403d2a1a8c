import type { QueueVideoInput, VideoQuoteInput } from '../gql/graphql';

/** The video form's values, as typed. */
export interface VideoValues {
  model: string;
  prompt: string;
  duration: string;
  resolution: string;
  aspectRatio: string;
  audio: boolean;
  imageUrl: string;
  /** Reference image URLs, one per line. */
  references: string;
}

export const VIDEO_DEFAULTS: VideoValues = { model: '', prompt: '', duration: '5s', resolution: '720p', aspectRatio: '16:9', audio: false, imageUrl: '', references: '' };

const needsImage = (model: string) => model.includes('image-to-video');
const needsReferences = (model: string) => model.includes('reference-to-video');

export const videoQuoteInput = (v: VideoValues): VideoQuoteInput => ({ model: v.model, duration: v.duration, resolution: v.resolution });

export function videoInput(v: VideoValues): QueueVideoInput {
  const refs = v.references.split(/\s+/).filter(Boolean);
  return {
    model: v.model,
    prompt: v.prompt.trim() || null,
    duration: v.duration,
    resolution: v.resolution,
    aspectRatio: v.aspectRatio,
    audio: v.audio,
    imageUrl: needsImage(v.model) ? v.imageUrl.trim() || null : null,
    referenceImageUrls: needsReferences(v.model) && refs.length ? refs : null,
  };
}

/** The fields of QueueVideoInput: a text, image or reference model, duration, resolution, aspect ratio, audio. */
export function VideoFields({ models, values: v, onChange }: { models: string[]; values: VideoValues; onChange: (patch: Partial<VideoValues>) => void }) {
  return (
    <>
      <div class="field">
        <label for="queue-model">Model</label>
        <select id="queue-model" value={v.model} onChange={(e) => onChange({ model: e.currentTarget.value })}>
          {models.map((id) => (
            <option value={id}>{id}</option>
          ))}
        </select>
      </div>
      <div class="field wide">
        <label for="queue-prompt">Prompt</label>
        <textarea id="queue-prompt" rows={3} value={v.prompt} onInput={(e) => onChange({ prompt: e.currentTarget.value })} />
      </div>
      {needsImage(v.model) && (
        <div class="field wide">
          <label for="queue-image">Image URL</label>
          <input id="queue-image" type="url" value={v.imageUrl} onInput={(e) => onChange({ imageUrl: e.currentTarget.value })} />
        </div>
      )}
      {needsReferences(v.model) && (
        <div class="field wide">
          <label for="queue-refs">Reference image URLs (one per line, up to 4)</label>
          <textarea id="queue-refs" rows={2} value={v.references} onInput={(e) => onChange({ references: e.currentTarget.value })} />
        </div>
      )}
      <div class="field">
        <label for="queue-duration">Duration</label>
        <select id="queue-duration" value={v.duration} onChange={(e) => onChange({ duration: e.currentTarget.value })}>
          <option>5s</option>
          <option>10s</option>
        </select>
      </div>
      <div class="field">
        <label for="queue-resolution">Resolution</label>
        <select id="queue-resolution" value={v.resolution} onChange={(e) => onChange({ resolution: e.currentTarget.value })}>
          <option>480p</option>
          <option>720p</option>
          <option>1080p</option>
        </select>
      </div>
      <div class="field">
        <label for="queue-aspect">Aspect ratio</label>
        <select id="queue-aspect" value={v.aspectRatio} onChange={(e) => onChange({ aspectRatio: e.currentTarget.value })}>
          {['16:9', '9:16', '1:1', '4:3', '3:4'].map((a) => (
            <option>{a}</option>
          ))}
        </select>
      </div>
      <label class="inline field">
        <input type="checkbox" checked={v.audio} onChange={(e) => onChange({ audio: e.currentTarget.checked })} /> Background audio
      </label>
    </>
  );
}
