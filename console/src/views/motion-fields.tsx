import type { CharacterOrientation, MotionControlInput, VideoQuoteInput } from '../gql/graphql';

/** The motion-control form's values, as typed. */
export interface MotionValues {
  imageUrl: string;
  videoUrl: string;
  /** Whole seconds, 1 to 30, as typed. */
  durationSeconds: string;
  prompt: string;
  keepOriginalSound: boolean;
  characterOrientation: CharacterOrientation;
}

export const MOTION_DEFAULTS: MotionValues = { imageUrl: '', videoUrl: '', durationSeconds: '5', prompt: '', keepOriginalSound: false, characterOrientation: 'IMAGE' };

/** Every value of the schema's CharacterOrientation (a value added there fails `tsc` here until it is named). */
const ORIENTATIONS: Record<CharacterOrientation, string> = { IMAGE: 'As in the image', VIDEO: 'As in the video' };

/** What is wrong with a typed duration, in words, or null (empty is the gateway's to name). */
export function durationProblem(text: string): string | null {
  const t = text.trim();
  if (t === '') return null;
  return /^\d{1,2}$/.test(t) && Number(t) >= 1 && Number(t) <= 30 ? null : 'The duration is a whole number of seconds, 1 to 30.';
}

/** Empty is left out, so the gateway names the missing field (duration_seconds). */
const seconds = (text: string): number | null => (text.trim() === '' ? null : Number(text));

export const motionQuoteInput = (model: string, v: MotionValues): VideoQuoteInput => ({ model, durationSeconds: seconds(v.durationSeconds) });

export const motionInput = (v: MotionValues): MotionControlInput => ({
  imageUrl: v.imageUrl.trim(),
  videoUrl: v.videoUrl.trim(),
  // Required by the schema; an empty field (the browser's own check bypassed) is 0, which the gateway refuses naming duration_seconds.
  durationSeconds: seconds(v.durationSeconds) ?? 0,
  prompt: v.prompt.trim() || null,
  keepOriginalSound: v.keepOriginalSound,
  characterOrientation: v.characterOrientation,
});

/** The fields of MotionControlInput: a character still, a motion reference video, the length, and how to orient the character. */
export function MotionFields({ values: v, onChange }: { values: MotionValues; onChange: (patch: Partial<MotionValues>) => void }) {
  return (
    <>
      <div class="field wide">
        <label for="motion-image">Image URL (the character)</label>
        <input id="motion-image" type="url" required value={v.imageUrl} onInput={(e) => onChange({ imageUrl: e.currentTarget.value })} />
      </div>
      <div class="field wide">
        <label for="motion-video">Video URL (the motion)</label>
        <input id="motion-video" type="url" required value={v.videoUrl} onInput={(e) => onChange({ videoUrl: e.currentTarget.value })} />
      </div>
      <div class="field">
        <label for="motion-duration">Duration (seconds, 1–30)</label>
        <input id="motion-duration" type="number" inputMode="numeric" required min={1} max={30} step={1} value={v.durationSeconds} onInput={(e) => onChange({ durationSeconds: e.currentTarget.value })} />
      </div>
      <div class="field">
        <label for="motion-orientation">Character orientation</label>
        <select id="motion-orientation" value={v.characterOrientation} onChange={(e) => onChange({ characterOrientation: e.currentTarget.value as CharacterOrientation })}>
          {(Object.keys(ORIENTATIONS) as CharacterOrientation[]).map((o) => (
            <option value={o}>{ORIENTATIONS[o]}</option>
          ))}
        </select>
      </div>
      <div class="field wide">
        <label for="motion-prompt">Prompt (optional)</label>
        <textarea id="motion-prompt" rows={2} value={v.prompt} onInput={(e) => onChange({ prompt: e.currentTarget.value })} />
      </div>
      <label class="inline field">
        <input type="checkbox" checked={v.keepOriginalSound} onChange={(e) => onChange({ keepOriginalSound: e.currentTarget.checked })} /> Keep original sound
      </label>
    </>
  );
}
