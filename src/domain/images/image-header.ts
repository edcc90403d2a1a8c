/**
 * The dimensions an uploaded image declares, read from its header alone: PNG's IHDR, JPEG's
 * first SOF marker, WebP's VP8 / VP8L / VP8X chunk. Nothing is decoded, so a few hundred bytes
 * claiming 20000x20000 cost nothing to refuse (a decompression bomb is only a bomb once decoded).
 */
export type ImageFormat = 'png' | 'jpeg' | 'webp';

export interface DeclaredImage {
  format: ImageFormat;
  width: number;
  height: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The format and declared size, or null when the bytes are none of PNG, JPEG or WebP. */
export function readImageHeader(data: Buffer): DeclaredImage | null {
  return readPng(data) ?? readJpeg(data) ?? readWebp(data);
}

function readPng(data: Buffer): DeclaredImage | null {
  if (data.length < 24 || !data.subarray(0, 8).equals(PNG_SIGNATURE)) return null;
  if (data.toString('latin1', 12, 16) !== 'IHDR') return null;
  return { format: 'png', width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

/** SOF0..SOF15 carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not. */
const isStartOfFrame = (marker: number) => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

function readJpeg(data: Buffer): DeclaredImage | null {
  if (data.length < 4 || data[0] !== 0xff || data[1] !== 0xd8) return null;
  let i = 2;
  while (i + 4 <= data.length) {
    if (data[i] !== 0xff) return null;
    const marker = data[i + 1];
    if (marker === 0xff) {
      i += 1; // fill byte
      continue;
    }
    // Markers without a length: TEM, RST0..7 (SOI/EOI cannot appear before the frame header).
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    if (marker === 0xda || marker === 0xd9) return null; // scan data or end before any frame header
    const length = data.readUInt16BE(i + 2);
    if (length < 2) return null;
    if (isStartOfFrame(marker)) {
      if (i + 9 > data.length) return null;
      return { format: 'jpeg', height: data.readUInt16BE(i + 5), width: data.readUInt16BE(i + 7) };
    }
    i += 2 + length;
  }
  return null;
}

function readWebp(data: Buffer): DeclaredImage | null {
  if (data.length < 30 || data.toString('latin1', 0, 4) !== 'RIFF' || data.toString('latin1', 8, 12) !== 'WEBP') return null;
  const chunk = data.toString('latin1', 12, 16);
  const body = 20;
  if (chunk === 'VP8X') {
    // Canvas size minus one, 24 bits little-endian each.
    return { format: 'webp', width: data.readUIntLE(body + 4, 3) + 1, height: data.readUIntLE(body + 7, 3) + 1 };
  }
  if (chunk === 'VP8 ') {
    // Lossy: a 3-byte frame tag, the start code 9d 01 2a, then 14-bit width and height.
    if (data[body + 3] !== 0x9d || data[body + 4] !== 0x01 || data[body + 5] !== 0x2a) return null;
    return { format: 'webp', width: data.readUInt16LE(body + 6) & 0x3fff, height: data.readUInt16LE(body + 8) & 0x3fff };
  }
  if (chunk === 'VP8L') {
    // Lossless: signature 0x2f, then width-1 and height-1 in 14 bits each.
    if (data[body] !== 0x2f) return null;
    const bits = data.readUInt32LE(body + 1);
    return { format: 'webp', width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  return null;
}
