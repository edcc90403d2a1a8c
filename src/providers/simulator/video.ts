/**
 * The simulator's video model. It keeps no state: the queue id is a hash of the job id, and
 * poll decides from the submission time and the spec alone, so a restarted gateway can poll
 * jobs submitted before the restart (as the port requires).
 *
 * Timeline: a job is `processing` until `videoSeconds` after submission, then either fails
 * (when the prompt contains `[fail]`; failing only at that point lets callers see the job go
 * through processing, webhooks included, as a real failure would) or completes with a real,
 * playable MP4 and its first frame as a PNG thumbnail. The clip is always short (1.5 s, a few
 * kB) whatever durationSeconds asks for: it only has to be real media, and it must encode in
 * milliseconds. Its progress is the share of that time gone by; a cancel has nothing to stop.
 */
import sharp from 'sharp';
import type { VideoJobSpec, VideoPollResult, VideoProvider } from '../ports';
import { upstreamError } from '../../domain/errors/domain-error';
import { encodeMp4 } from './mp4';
import { PNG_CONTENT_TYPE, rawOf } from './png';
import { createPrng, seedFromParts, shortHash } from './seed';

const FAIL_TRIGGER = '[fail]';
const FAIL_REASON = 'The simulator was asked to fail this job ([fail] in the prompt).';

const FRAME_RATE = 8;
const FRAME_COUNT = 12;

/** Clip size by orientation of `aspectRatio` ("16:9", "9:16", "1:1"); multiples of 16. */
function clipSize(aspectRatio: string | undefined): { width: number; height: number } {
  const match = aspectRatio?.split(':');
  const w = match && match.length === 2 ? Number(match[0]) : NaN;
  const h = match && match.length === 2 ? Number(match[1]) : NaN;
  if (!(w > 0 && h > 0) || w > h) return { width: 160, height: 96 };
  if (w < h) return { width: 96, height: 160 };
  return { width: 128, height: 128 };
}

/**
 * Everything a real model would look at, URLs included: the simulator never fetches source
 * media, it only folds the URLs into the seed. The job id is left out so that two identical
 * requests give identical clips.
 */
function seedOf(spec: VideoJobSpec): Uint32Array {
  return seedFromParts([
    'video',
    spec.upstreamModel,
    spec.kind,
    spec.prompt,
    spec.durationSeconds,
    spec.resolution,
    spec.aspectRatio,
    spec.audio,
    spec.imageUrl,
    spec.referenceImageUrls?.length,
    ...(spec.referenceImageUrls ?? []),
    spec.videoUrl,
    spec.keepOriginalSound,
    spec.characterOrientation,
  ]);
}

/** A horizontal two-colour gradient that scrolls, with a bar of a third colour sweeping across. */
function framePainter(width: number, height: number, seed: Uint32Array): (index: number, rgba: Uint8Array) => void {
  const prng = createPrng(seed);
  const a = [prng.int(256), prng.int(256), prng.int(256)];
  const b = [prng.int(256), prng.int(256), prng.int(256)];
  const bar = [prng.int(256), prng.int(256), prng.int(256)];
  const barWidth = Math.max(4, Math.floor(width / 8));
  return (index, rgba) => {
    const shift = Math.floor((index * width) / FRAME_COUNT);
    const barX = Math.floor((index * (width - barWidth)) / Math.max(1, FRAME_COUNT - 1));
    let o = 0;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        if (x >= barX && x < barX + barWidth) {
          rgba[o] = bar[0];
          rgba[o + 1] = bar[1];
          rgba[o + 2] = bar[2];
        } else {
          // Integer math only in pixel loops (see paintPattern in png.ts).
          const p = (x + shift) % width;
          const t = (((p < width >> 1 ? p : width - p) * 512) / width) | 0; // 0..256 and back
          rgba[o] = a[0] + (((b[0] - a[0]) * t) >> 8);
          rgba[o + 1] = a[1] + (((b[1] - a[1]) * t) >> 8);
          rgba[o + 2] = a[2] + (((b[2] - a[2]) * t) >> 8);
        }
        rgba[o + 3] = 255;
        o += 4;
      }
    }
  };
}

export class SimulatorVideoProvider implements VideoProvider {
  private readonly videoMs: number;
  private readonly now: () => number;

  constructor(options: { videoSeconds: number; now?: () => number }) {
    this.videoMs = options.videoSeconds * 1000;
    this.now = options.now ?? Date.now;
  }

  /** The queue id is the job's own hash and nothing happens elsewhere: a repeated submit is the same submit. */
  readonly submitIsRepeatable = true;

  async submit(spec: VideoJobSpec): Promise<{ queueId: string }> {
    return { queueId: `sim_${shortHash(spec.jobId)}` };
  }

  async poll(job: { queueId: string; submittedAt: Date; spec: VideoJobSpec }): Promise<VideoPollResult> {
    if (this.now() < job.submittedAt.getTime() + this.videoMs) return { state: 'processing' };
    if (job.spec.prompt?.toLowerCase().includes(FAIL_TRIGGER)) return { state: 'failed', reason: FAIL_REASON };

    const { width, height } = clipSize(job.spec.aspectRatio);
    const paintFrame = framePainter(width, height, seedOf(job.spec));
    try {
      const data = await encodeMp4({ width, height, frameRate: FRAME_RATE, frameCount: FRAME_COUNT, paintFrame });
      const firstFrame = new Uint8Array(width * height * 4);
      paintFrame(0, firstFrame);
      const thumbnail = await sharp(firstFrame, rawOf({ width, height })).png({ compressionLevel: 1 }).toBuffer();
      return { state: 'completed', video: { data, contentType: 'video/mp4' }, thumbnail: { data: thumbnail, contentType: PNG_CONTENT_TYPE } };
    } catch (error) {
      throw upstreamError('The simulator could not encode the video.', error);
    }
  }

  /** The share of the job's time gone by, 0 to 99: it is 100 only once a poll has found it done. */
  progressAt(job: { submittedAt: Date }, nowMs: number): number {
    const share = Math.floor(((nowMs - job.submittedAt.getTime()) * 100) / Math.max(1, this.videoMs));
    return Math.max(0, Math.min(99, share));
  }

  /** Nothing runs anywhere else: the next poll finds nothing to do, since the job is no longer PROCESSING. */
  async cancel(): Promise<void> {}
}
