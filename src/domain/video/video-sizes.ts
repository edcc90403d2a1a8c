/**
 * OpenAI's `size` (`1280x720`) and the gateway's resolution and aspect ratio, both ways: each
 * resolution is the short side in pixels (480, 720 or 1080), each aspect ratio one of the five
 * the video models take, so `1280x720` is 720p 16:9 and `720x1280` 720p 9:16.
 */
import type { VIDEO_RESOLUTIONS } from '../catalog/model';
import { ASPECT_RATIOS } from './video-requests';

export type Resolution = (typeof VIDEO_RESOLUTIONS)[number];
export type AspectRatio = (typeof ASPECT_RATIOS)[number];

/** Width x height for each resolution, by aspect ratio (a 16:9 480p frame is 854 wide, as players size it). */
const FRAMES: Record<Resolution, Record<AspectRatio, [number, number]>> = {
  '480p': { '16:9': [854, 480], '9:16': [480, 854], '1:1': [480, 480], '4:3': [640, 480], '3:4': [480, 640] },
  '720p': { '16:9': [1280, 720], '9:16': [720, 1280], '1:1': [720, 720], '4:3': [960, 720], '3:4': [720, 960] },
  '1080p': { '16:9': [1920, 1080], '9:16': [1080, 1920], '1:1': [1080, 1080], '4:3': [1440, 1080], '3:4': [1080, 1440] },
};

const BY_SIZE = new Map<string, { resolution: Resolution; aspectRatio: AspectRatio }>(
  Object.entries(FRAMES).flatMap(([resolution, ratios]) =>
    Object.entries(ratios).map(([aspectRatio, [w, h]]) => [`${w}x${h}`, { resolution: resolution as Resolution, aspectRatio: aspectRatio as AspectRatio }]),
  ),
);

/** Every size the video models make, for a refusal to list. */
export const VIDEO_SIZES: readonly string[] = [...BY_SIZE.keys()];

/** The resolution and aspect ratio of a size, or undefined when no video model makes it. */
export function fromSize(size: string): { resolution: Resolution; aspectRatio: AspectRatio } | undefined {
  return BY_SIZE.get(size);
}

/** The size of a resolution and aspect ratio; what a job left unset is the queue's default (720p, 16:9). */
export function toSize(resolution: Resolution | undefined, aspectRatio: string | undefined): string {
  const ratios = FRAMES[resolution ?? '720p'];
  const [w, h] = ratios[(aspectRatio ?? '16:9') as AspectRatio] ?? ratios['16:9'];
  return `${w}x${h}`;
}
