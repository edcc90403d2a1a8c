/**
 * Image editing: POST /images/edits as multipart/form-data, the way the OpenAI SDK sends it.
 * The body is undici's FormData (the WHATWG encoder: it escapes quotes and line breaks in
 * names and filenames, draws the boundary and computes the Content-Length from the Blobs).
 */
import { FormData } from 'undici';
import type { GeneratedImages, ImageEditRequest, ImageStreamEvent, InputFile } from '../ports';
import type { FetchMedia } from '../shared/fetch-media';
import { imagesFromResponse } from './image-results';
import { streamImages } from './image-stream';
import type { UpstreamHttp } from './upstream-http';

const blobOf = (file: InputFile) => new Blob([file.data], { type: file.contentType });

export async function editImages(http: UpstreamHttp, request: ImageEditRequest, fetchMedia: FetchMedia | undefined): Promise<GeneratedImages> {
  const response = await http.postMultipart('/images/edits', editForm(request), request.signal);
  return imagesFromResponse(response, fetchMedia);
}

/** A streamed edit: the same form with `stream` and `partial_images`, read as OpenAI's image events. */
export function streamEditedImages(http: UpstreamHttp, request: ImageEditRequest, fetchMedia: FetchMedia | undefined): AsyncIterable<ImageStreamEvent> {
  const form = editForm(request);
  form.append('stream', 'true');
  form.append('partial_images', String(request.partialImages ?? 0));
  return streamImages(http, '/images/edits', form, request.signal, fetchMedia);
}

function editForm(request: ImageEditRequest): FormData {
  const form = new FormData();
  form.append('model', request.upstreamModel);
  form.append('prompt', request.prompt);
  form.append('n', String(request.n));
  if (request.width !== undefined && request.height !== undefined) form.append('size', `${request.width}x${request.height}`);
  if (request.seed !== undefined) form.append('seed', String(request.seed));
  for (const [name, value] of Object.entries(request.options ?? {})) form.append(name, String(value));
  if (request.user !== undefined) form.append('user', request.user);
  // One image goes as `image`; several go as repeated `image[]`, as the OpenAI SDKs do.
  // No response_format: gpt-image models refuse it and always answer base64 anyway.
  const imageField = request.images.length > 1 ? 'image[]' : 'image';
  for (const image of request.images) form.append(imageField, blobOf(image), image.filename);
  if (request.mask) form.append('mask', blobOf(request.mask), request.mask.filename);
  return form;
}
