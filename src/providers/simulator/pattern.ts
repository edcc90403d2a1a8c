/**
 * The simulator's generated picture: a diagonal gradient between two seeded colours under a
 * grid of translucent seeded colour blocks, as an SVG of at most 65 shapes that sharp renders
 * (librsvg, in libvips' threads) at the asked size. Rendering an SVG was the cheapest of the
 * ways measured to make 2048x2048 pixels without a JS pixel loop (about 55 ms, against 240 ms
 * for composited tiles and 90 ms for scaled-up rasters); the same seed gives the same pixels.
 */
import { createPrng } from './seed';

export function patternSvg(width: number, height: number, seed: Uint32Array): Buffer {
  const prng = createPrng(seed);
  const rgb = () => `rgb(${prng.int(256)},${prng.int(256)},${prng.int(256)})`;
  const from = rgb();
  const to = rgb();
  const cols = 3 + prng.int(6);
  const rows = 3 + prng.int(6);
  const shapes: string[] = [];
  for (let row = 0; row < rows; row++) {
    for (let col = 0; col < cols; col++) {
      const fill = rgb();
      // One colour and opacity (64..192 of 256) per block; some blocks stay clear.
      const alpha = prng.int(4) === 0 ? 0 : 64 + prng.int(129);
      if (alpha === 0) continue;
      const x = Math.floor((col * width) / cols);
      const y = Math.floor((row * height) / rows);
      const w = Math.floor(((col + 1) * width) / cols) - x;
      const h = Math.floor(((row + 1) * height) / rows) - y;
      shapes.push(`<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="${fill}" fill-opacity="${(alpha / 256).toFixed(4)}"/>`);
    }
  }
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
      `<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${from}"/><stop offset="1" stop-color="${to}"/></linearGradient></defs>` +
      `<rect width="${width}" height="${height}" fill="url(#g)"/>${shapes.join('')}</svg>`,
  );
}
