/**
 * Reading streamed image answers in tests: the PNG inside an event, its size as its IHDR chunk
 * declares it, how many colours it has, and a raw event stream split into its events.
 */
import { PNG } from 'pngjs';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The PNG a `b64_json` carries, checked as a user would: its signature, its IHDR size, and a full decode (its RGBA pixels). */
export function pngOf(b64: string): { width: number; height: number; colours: number; pixels: Buffer } {
  const bytes = Buffer.from(b64, 'base64');
  expect(bytes.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  expect(bytes.toString('latin1', 12, 16)).toBe('IHDR');
  const declared = { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  const png = PNG.sync.read(bytes);
  expect({ width: png.width, height: png.height }).toEqual(declared);
  const colours = new Set<number>();
  for (let i = 0; i < png.data.length; i += 4) colours.add(png.data.readUInt32BE(i));
  return { ...declared, colours: colours.size, pixels: png.data };
}

/** How far apart two images of one size are: the mean difference of their RGBA bytes. */
export function distance(a: Buffer, b: Buffer): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i]);
  return sum / a.length;
}

/** The events of a raw `text/event-stream` body: each one's `event:` name and parsed `data:`. */
export function eventsOf(body: string): { name: string | undefined; data: any }[] {
  return body
    .split('\n\n')
    .filter((block) => block.includes('data:'))
    .map((block) => {
      const lines = block.split('\n');
      const name = lines.find((l) => l.startsWith('event: '))?.slice(7);
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return { name, data: JSON.parse(data) };
    });
}
