/**
 * The catalog's size bound, on the way in and on the way out. Uploaded edit inputs are judged
 * by the size they declare, before anything decodes them: PNG, JPEG or WebP, each side within
 * the bound an output has, so an input never costs more to decode than the largest image we
 * would make. Outputs (a provider's answer) are held to the same bound before anyone sees them.
 */
import { invalidRequest, upstreamError } from '../errors/domain-error';
import { FIELD, words, type FieldPath } from '../errors/field-path';
import type { GeneratedImage, InputFile } from './image-port';
import { readImageHeader, type DeclaredImage } from './image-header';
import { MAX_SIDE } from './image-size';

/** The most pixels any decoder is allowed to produce from one input (sharp's limitInputPixels). */
export const MAX_INPUT_PIXELS = MAX_SIDE * MAX_SIDE;

/** `path` names the upload: `image`, `mask`, or `image[i]` when several images came. */
export function checkInputImage(file: InputFile, path: FieldPath): DeclaredImage {
  const declared = readImageHeader(file.data);
  if (declared === null) throw invalidRequest(words`The ${FIELD} must be a PNG, JPEG or WebP image.`, path, 'invalid_image_format');
  const { width, height } = declared;
  if (width < 1 || height < 1 || width > MAX_SIDE || height > MAX_SIDE) {
    throw invalidRequest(words`The ${FIELD} declares ${width}x${height} pixels; each side may be 1 to ${MAX_SIDE} pixels.`, path, 'image_too_large');
  }
  return declared;
}

/** Every input checked; answers the first image's declared size (an edit's default output size). */
export function checkInputImages(images: InputFile[], mask: InputFile | undefined): DeclaredImage {
  const declared = images.map((image, i) => checkInputImage(image, images.length > 1 ? ['image', i] : ['image']));
  if (mask) {
    const m = checkInputImage(mask, ['mask']);
    const first = declared[0];
    // As OpenAI requires: the mask marks pixels of the image, so it has the image's dimensions.
    if (first && (m.width !== first.width || m.height !== first.height)) {
      throw invalidRequest(
        words`The ${FIELD} is ${m.width}x${m.height} pixels; it must have the image's dimensions, ${first.width}x${first.height}.`,
        ['mask'],
        'invalid_mask',
      );
    }
  }
  return declared[0];
}

/** A provider answered an image beyond the bound (or none we can read the size of): a 502, nothing charged. */
export function checkOutputImages(images: GeneratedImage[]): void {
  for (const image of images) {
    const declared = readImageHeader(image.data);
    if (declared === null || declared.width > MAX_SIDE || declared.height > MAX_SIDE) {
      throw upstreamError('The model provider answered an image this service does not serve (unknown format or larger than its size bound).');
    }
  }
}
