/**
 * Maps a VideoJobSpec onto the JSON input of a fal video model. Only the fields the job set are
 * sent: fal models validate their input strictly and many reject fields they do not know.
 */
import type { VideoJobSpec } from '../ports';

export function submitBody(spec: VideoJobSpec): Record<string, unknown> {
  const body: Record<string, unknown> = {
    // fal video models take the duration as a string of seconds ("5", "10").
    duration: String(spec.durationSeconds),
  };
  if (spec.prompt !== undefined) body.prompt = spec.prompt;
  if (spec.resolution !== undefined) body.resolution = spec.resolution;
  if (spec.aspectRatio !== undefined) body.aspect_ratio = spec.aspectRatio;
  if (spec.audio !== undefined) body.generate_audio = spec.audio;
  if (spec.imageUrl !== undefined) body.image_url = spec.imageUrl;
  if (spec.referenceImageUrls !== undefined && spec.referenceImageUrls.length > 0) {
    body.reference_image_urls = spec.referenceImageUrls;
  }
  if (spec.videoUrl !== undefined) body.video_url = spec.videoUrl;
  if (spec.keepOriginalSound !== undefined) body.keep_original_sound = spec.keepOriginalSound;
  if (spec.characterOrientation !== undefined) body.character_orientation = spec.characterOrientation;
  return body;
}
