import type { Catalog } from '../catalog/catalog';
import type { MotionModel, VideoModel } from '../catalog/model';
import { MEMBER_CREDIT_FACTOR } from '../shared/money';

export type VideoDuration = '5s' | '10s';
export type VideoResolution = '480p' | '720p' | '1080p';

export function videoCredits(model: VideoModel, duration: VideoDuration, resolution: VideoResolution): number {
  return model.credits[duration][resolution];
}

export function motionCredits(model: MotionModel, durationSeconds: number): number {
  return model.creditsPerSecond * durationSeconds;
}

export function estimatedCostUsd(catalog: Catalog, credits: number): { member: number; nonMember: number } {
  // To the micro-dollar: 35 × 0.01 is 0.35000000000000003 in floating point, which quotes showed.
  const nonMember = Math.round(credits * catalog.usdPerCredit * 1e6) / 1e6;
  return { member: nonMember / MEMBER_CREDIT_FACTOR, nonMember };
}

export const durationSeconds = (d: VideoDuration): number => (d === '5s' ? 5 : 10);
