/** Image editing: POST /images/edits as multipart/form-data, the way the OpenAI SDK sends it. */
import type { GeneratedImage, ImageEditRequest } from '../ports';
import type { FetchMedia } from './fetch-media';
import { imagesFromResponse } from './image-results';
import { MultipartBuilder } from './multipart';
import type { UpstreamHttp } from './upstream-http';

export async function editImages(
  http: UpstreamHttp,
  request: ImageEditRequest,
  fetchMedia: FetchMedia | undefined,
): Promise<GeneratedImage[]> {
  const form = new MultipartBuilder()
    .field('model', request.upstreamModel)
    .field('prompt', request.prompt)
    .field('n', String(request.n));
  if (request.width !== undefined && request.height !== undefined) form.field('size', `${request.width}x${request.height}`);
  if (request.seed !== undefined) form.field('seed', String(request.seed));
  for (const [name, value] of Object.entries(request.options ?? {})) form.field(name, String(value));
  if (request.user !== undefined) form.field('user', request.user);
  // One image goes as `image`; several go as repeated `image[]`, as the OpenAI SDKs do.
  // No response_format: gpt-image models refuse it and always answer base64 anyway.
  const imageField = request.images.length > 1 ? 'image[]' : 'image';
  for (const image of request.images) form.file(imageField, image);
  if (request.mask) form.file('mask', request.mask);
  const { body, contentType } = form.build();
  const response = await http.postMultipart('/images/edits', body, contentType, request.signal);
  return imagesFromResponse(response, fetchMedia);
}
