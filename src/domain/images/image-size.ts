import { invalidField } from '../errors/domain-error';
import type { FieldPath } from '../errors/field-path';

/** Bounds for any `WxH`: each side 64-2048 pixels (SPEC leaves them open; CONTRACT: sane bounds). */
export const MIN_SIDE = 64;
export const MAX_SIDE = 2048;

export function parseImageSize(size: string, path: FieldPath = ['size']): { width: number; height: number } {
  const m = /^(\d{1,5})x(\d{1,5})$/.exec(size);
  if (!m) throw invalidField(path, 'expected WIDTHxHEIGHT such as 1024x1024.');
  const width = Number(m[1]);
  const height = Number(m[2]);
  if (width < MIN_SIDE || height < MIN_SIDE || width > MAX_SIDE || height > MAX_SIDE) {
    throw invalidField(path, `each side must be between ${MIN_SIDE} and ${MAX_SIDE} pixels.`);
  }
  return { width, height };
}
