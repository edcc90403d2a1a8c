import { PNG } from 'pngjs';

/** Decodes a PNG the way a user would check one: it must parse, and we read its size. */
export function decodePng(data: Buffer): { width: number; height: number } {
  const png = PNG.sync.read(data);
  return { width: png.width, height: png.height };
}
