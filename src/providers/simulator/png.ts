/**
 * Painting and encoding the simulator's PNGs. Speed matters more than size: 1024x1024 must
 * take a few tens of milliseconds, so pixels are written straight into one buffer and the
 * encoder uses deflate level 1 with the fixed "Sub" filter (pngjs's adaptive filter choice
 * tries all five filters on every row and costs several times more).
 */
import { PNG } from 'pngjs';
import { createPrng } from './seed';

export const PNG_CONTENT_TYPE = 'image/png';

/** RGBA pixels, 4 bytes a pixel, row-major. */
export interface RgbaImage {
  width: number;
  height: number;
  data: Buffer;
}

/** Fresh options every call: pngjs writes its defaults into the object it is given. */
export function encodePng(image: RgbaImage): Buffer {
  // Sized after construction: given a size, the constructor would allocate and zero a second
  // pixel buffer only for us to replace it.
  const png = new PNG();
  png.width = image.width;
  png.height = image.height;
  png.data = image.data;
  return PNG.sync.write(png, { deflateLevel: 1, filterType: 1, colorType: 6, inputColorType: 6, inputHasAlpha: true });
}

/** Largest input we decode: 16.7 M pixels is 64 MB of RGBA. */
export const MAX_INPUT_PIXELS = 4096 * 4096;

/**
 * Width and height from the IHDR chunk, read before decoding so that a few hundred bytes
 * claiming 100000x100000 pixels cannot make us allocate gigabytes. Null if not a PNG header.
 */
export function pngDimensions(data: Buffer): { width: number; height: number } | null {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (data.length < 24 || signature.some((byte, i) => data[i] !== byte)) return null;
  if (data.toString('latin1', 12, 16) !== 'IHDR') return null;
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

/** Decodes a PNG into RGBA, or returns null when the bytes are not a PNG pngjs can read. */
export function tryDecodePng(data: Buffer): RgbaImage | null {
  try {
    const png = PNG.sync.read(data);
    return { width: png.width, height: png.height, data: png.data };
  } catch {
    return null;
  }
}

/**
 * A visible, seeded pattern: a diagonal gradient between two colours under a grid of
 * translucent colour blocks. Distinct seeds give distinct colours and grids; the same seed
 * always gives the same pixels.
 */
export function paintPattern(width: number, height: number, seed: Uint32Array): RgbaImage {
  const prng = createPrng(seed);
  const from = [prng.int(256), prng.int(256), prng.int(256)];
  const to = [prng.int(256), prng.int(256), prng.int(256)];
  const cols = 3 + prng.int(6);
  const rows = 3 + prng.int(6);
  // One colour and opacity (0..192 of 256) per block; some blocks stay clear.
  const blocks = new Int32Array(cols * rows * 4);
  for (let b = 0; b < cols * rows; b++) {
    blocks[b * 4] = prng.int(256);
    blocks[b * 4 + 1] = prng.int(256);
    blocks[b * 4 + 2] = prng.int(256);
    blocks[b * 4 + 3] = prng.int(4) === 0 ? 0 : 64 + prng.int(129);
  }

  // Integer arithmetic only (`| 0`, shifts) in the pixel loops: under Jest's vm sandbox a
  // Math.floor per pixel made a 1024x1024 image 15 times slower.
  const f0 = from[0];
  const f1 = from[1];
  const f2 = from[2];
  const d0 = to[0] - f0;
  const d1 = to[1] - f1;
  const d2 = to[2] - f2;
  const data = Buffer.allocUnsafe(width * height * 4);
  const span = Math.max(1, width + height - 2);
  let o = 0;
  for (let y = 0; y < height; y++) {
    const blockRow = (((y * rows) / height) | 0) * cols;
    for (let x = 0; x < width; x++) {
      const t = (((x + y) * 256) / span) | 0; // 0..256 along the diagonal
      const r = f0 + ((d0 * t) >> 8);
      const g = f1 + ((d1 * t) >> 8);
      const bl = f2 + ((d2 * t) >> 8);
      const k = (blockRow + (((x * cols) / width) | 0)) << 2;
      const a = blocks[k + 3];
      data[o] = r + (((blocks[k] - r) * a) >> 8);
      data[o + 1] = g + (((blocks[k + 1] - g) * a) >> 8);
      data[o + 2] = bl + (((blocks[k + 2] - bl) * a) >> 8);
      data[o + 3] = 255;
      o += 4;
    }
  }
  return { width, height, data };
}

/** Nearest-neighbour resize (edits keep the input's content at the requested size). */
export function resizeNearest(image: RgbaImage, width: number, height: number): RgbaImage {
  if (image.width === width && image.height === height) return image; // callers never write to it
  const data = Buffer.allocUnsafe(width * height * 4);
  const src = image.data;
  let o = 0;
  // Source column of each output column, computed once (integer math, see paintPattern).
  const srcX = new Int32Array(width);
  for (let x = 0; x < width; x++) srcX[x] = ((x * image.width) / width) | 0;
  for (let y = 0; y < height; y++) {
    const rowBase = (((y * image.height) / height) | 0) * image.width;
    for (let x = 0; x < width; x++) {
      const s = (rowBase + srcX[x]) << 2;
      data[o] = src[s];
      data[o + 1] = src[s + 1];
      data[o + 2] = src[s + 2];
      data[o + 3] = src[s + 3];
      o += 4;
    }
  }
  return { width, height, data };
}
