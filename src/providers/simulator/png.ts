/** The simulator's raw pixels between sharp pipelines: RGBA, 4 bytes a pixel, row-major. */
export const PNG_CONTENT_TYPE = 'image/png';

export interface RgbaImage {
  width: number;
  height: number;
  data: Buffer;
}

/** sharp's description of an RgbaImage's bytes. */
export const rawOf = (image: { width: number; height: number }, channels: 1 | 4 = 4) => ({ raw: { width: image.width, height: image.height, channels } });
