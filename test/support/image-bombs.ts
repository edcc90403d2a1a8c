/**
 * Hostile images for the edit endpoint: real, tiny files that declare (and, for the PNG,
 * really contain) far more pixels than the gateway serves.
 */
import { deflateSync } from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const byte of data) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(body.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), body])), 0);
  return Buffer.concat([head, body, crc]);
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function ihdr(width: number, height: number, bitDepth: number, colorType: number): Buffer {
  const b = Buffer.alloc(13);
  b.writeUInt32BE(width, 0);
  b.writeUInt32BE(height, 4);
  b[8] = bitDepth;
  b[9] = colorType;
  return chunk('IHDR', b);
}

/**
 * A complete, valid 1-bit greyscale PNG of `side` x `side` black pixels: every row is a filter
 * byte and side/8 zero bytes, so 20000x20000 (400 M pixels, 1.6 GB as RGBA) deflates to ~50 kB.
 */
export function pngBomb(side: number): Buffer {
  const row = 1 + Math.ceil(side / 8);
  const idat = deflateSync(Buffer.alloc(row * side), { level: 9 });
  return Buffer.concat([SIGNATURE, ihdr(side, side, 1, 0), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]);
}

/** A PNG signature and IHDR declaring width x height RGBA, and nothing else (a truncated upload). */
export function pngHeaderOnly(width: number, height: number): Buffer {
  return Buffer.concat([SIGNATURE, ihdr(width, height, 8, 6)]);
}

/** A JPEG start and a baseline SOF0 declaring width x height, three components. */
export function jpegHeaderOnly(width: number, height: number): Buffer {
  const sof = Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, 0, 0, 0, 0, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01]);
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof]);
}

/** A RIFF/WEBP container whose VP8X chunk declares a width x height canvas. */
export function webpHeaderOnly(width: number, height: number): Buffer {
  const vp8x = Buffer.alloc(10);
  vp8x.writeUIntLE(width - 1, 4, 3);
  vp8x.writeUIntLE(height - 1, 7, 3);
  const body = Buffer.concat([Buffer.from('WEBPVP8X', 'latin1'), Buffer.from([10, 0, 0, 0]), vp8x]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}
