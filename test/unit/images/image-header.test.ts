import sharp from 'sharp';
import { readImageHeader } from '../../../src/domain/images/image-header';
import { checkInputImage, checkOutputImages } from '../../../src/domain/images/image-bounds';
import { jpegHeaderOnly, pngBomb, pngHeaderOnly, webpHeaderOnly } from '../../support/image-bombs';

const make = (width: number, height: number, channels: 3 | 4 = 3) => sharp({ create: { width, height, channels, background: '#3366cc' } });
const input = (data: Buffer) => ({ data, filename: 'x', contentType: 'application/octet-stream' });

describe('readImageHeader', () => {
  it.each([
    ['png', () => make(300, 200).png().toBuffer()],
    ['jpeg (baseline)', () => make(300, 200).jpeg().toBuffer()],
    ['jpeg (progressive, with EXIF first)', () => make(300, 200).withMetadata().jpeg({ progressive: true }).toBuffer()],
    ['webp lossy (VP8)', () => make(300, 200).webp().toBuffer()],
    ['webp lossless (VP8L)', () => make(300, 200).webp({ lossless: true }).toBuffer()],
    ['webp with alpha (VP8X)', () => make(300, 200, 4).webp({ alphaQuality: 50 }).toBuffer()],
  ])('reads the size of a real %s, as sharp does', async (_name, build) => {
    const data = await build();
    const header = readImageHeader(data);
    const meta = await sharp(data).metadata();
    expect(header).toMatchObject({ width: meta.width, height: meta.height });
    expect(header?.format).toBe(meta.format === 'jpeg' ? 'jpeg' : meta.format);
  });

  it('reads what hand-made headers declare, with nothing behind them', () => {
    expect(readImageHeader(pngHeaderOnly(4096, 4096))).toEqual({ format: 'png', width: 4096, height: 4096 });
    expect(readImageHeader(jpegHeaderOnly(20000, 20000))).toEqual({ format: 'jpeg', width: 20000, height: 20000 });
    expect(readImageHeader(webpHeaderOnly(20000, 20000))).toEqual({ format: 'webp', width: 20000, height: 20000 });
  });

  it('answers null for what is none of the three', async () => {
    expect(readImageHeader(Buffer.from('GIF89a........................'))).toBeNull();
    expect(readImageHeader(await make(10, 10).gif().toBuffer())).toBeNull();
    expect(readImageHeader(Buffer.alloc(0))).toBeNull();
    expect(readImageHeader(Buffer.from([0xff, 0xd8, 0xff, 0xda, 0, 2]))).toBeNull(); // scan before any frame
  });
});

describe('checkInputImage / checkOutputImages', () => {
  it('refuses by declared size, naming the field, and takes the bound itself', async () => {
    expect(() => checkInputImage(input(pngBomb(20000)), ['image'])).toThrow(
      expect.objectContaining({ type: 'invalid_request_error', param: 'image', code: 'image_too_large' }),
    );
    expect(() => checkInputImage(input(pngHeaderOnly(4096, 4096)), ['mask'])).toThrow(expect.objectContaining({ param: 'mask' }));
    expect(() => checkInputImage(input(pngHeaderOnly(2049, 16)), ['image'])).toThrow(expect.objectContaining({ param: 'image' }));
    expect(() => checkInputImage(input(Buffer.from('hello')), ['image'])).toThrow(expect.objectContaining({ code: 'invalid_image_format' }));
    expect(checkInputImage(input(pngHeaderOnly(2048, 2048)), ['image'])).toMatchObject({ width: 2048, height: 2048 });
  });

  it('holds provider outputs to the same bound (502)', async () => {
    const ok = { data: await make(64, 64).png().toBuffer(), contentType: 'image/png' };
    expect(() => checkOutputImages([ok])).not.toThrow();
    expect(() => checkOutputImages([ok, { data: pngHeaderOnly(4096, 4096), contentType: 'image/png' }])).toThrow(
      expect.objectContaining({ type: 'upstream_error' }),
    );
  });
});
