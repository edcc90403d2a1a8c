/**
 * The MP4 muxer inside h264-mp4-encoder stamps the wall-clock time into the movie, track and
 * media headers, so two encodes of the same frames differ by a few bytes. The simulator
 * promises byte-identical output for identical inputs, so those fields are zeroed (0 is the
 * ISO BMFF way of saying "unknown"; players ignore it).
 */

/** Boxes whose children we walk to reach the headers. */
const CONTAINERS = new Set(['moov', 'trak', 'mdia']);
/** Full boxes that start with creation_time and modification_time. */
const TIMESTAMPED = new Set(['mvhd', 'tkhd', 'mdhd']);

/** Zeroes creation and modification times in place; leaves anything it cannot parse alone. */
export function clearMp4Timestamps(data: Buffer, start = 0, end = data.length): void {
  let offset = start;
  while (offset + 8 <= end) {
    let size = data.readUInt32BE(offset);
    const type = data.toString('latin1', offset + 4, offset + 8);
    let header = 8;
    if (size === 1) {
      if (offset + 16 > end) return;
      size = Number(data.readBigUInt64BE(offset + 8));
      header = 16;
    } else if (size === 0) {
      size = end - offset; // extends to the end of its parent
    }
    if (size < header || offset + size > end) return;

    if (CONTAINERS.has(type)) {
      clearMp4Timestamps(data, offset + header, offset + size);
    } else if (TIMESTAMPED.has(type)) {
      const body = offset + header;
      const version = data[body];
      const fieldBytes = version === 1 ? 8 : 4;
      if (body + 4 + 2 * fieldBytes <= offset + size) data.fill(0, body + 4, body + 4 + 2 * fieldBytes);
    }
    offset += size;
  }
}
