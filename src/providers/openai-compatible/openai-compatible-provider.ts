/**
 * Adapter for any upstream that speaks the OpenAI HTTP API (OpenAI itself, vLLM, llama.cpp,
 * LiteLLM, hosted image servers…): chat, image generation and image edits, each JSON or streamed.
 * Each capability lives in its own file; this class only holds the shared connection state.
 * Every failure surfaces as a DomainError: content_policy_violation for a content refusal,
 * upstream_error for everything else, with a message of ours and the original as `cause`.
 */
import type {
  ChatProvider,
  ChatRequest,
  ChatResult,
  ChatStreamEvent,
  GeneratedImages,
  ImageEditProvider,
  ImageEditRequest,
  ImageGenerationRequest,
  ImageProvider,
  ImageStreamEvent,
} from '../ports';
import { completeChat } from './chat-complete';
import { streamChat } from './chat-stream';
import type { FetchMedia } from '../shared/fetch-media';
import { editImages, streamEditedImages } from './image-edit';
import { generateImages, streamGeneratedImages } from './image-generate';
import { UpstreamHttp } from './upstream-http';
import type { UpstreamConnection } from '../shared/upstream-connection';

/** `apiKey` goes as `Authorization: Bearer …`. */
export interface OpenAICompatibleOptions extends UpstreamConnection {
  /** Total deadline of a JSON call; for a stream, the longest wait for headers or between chunks. */
  timeoutMs: number;
  /** Needed only for upstreams that answer image URLs instead of base64. */
  fetchMedia?: FetchMedia;
}

export class OpenAICompatibleProvider implements ChatProvider, ImageProvider, ImageEditProvider {
  private readonly http: UpstreamHttp;
  private readonly fetchMedia?: FetchMedia;

  constructor(options: OpenAICompatibleOptions) {
    this.http = new UpstreamHttp(options);
    this.fetchMedia = options.fetchMedia;
  }

  complete(request: ChatRequest): Promise<ChatResult> {
    return completeChat(this.http, request);
  }

  stream(request: ChatRequest): AsyncIterable<ChatStreamEvent> {
    return streamChat(this.http, request);
  }

  generate(request: ImageGenerationRequest): Promise<GeneratedImages> {
    return generateImages(this.http, request, this.fetchMedia);
  }

  edit(request: ImageEditRequest): Promise<GeneratedImages> {
    return editImages(this.http, request, this.fetchMedia);
  }

  generateStream(request: ImageGenerationRequest): AsyncIterable<ImageStreamEvent> {
    return streamGeneratedImages(this.http, request, this.fetchMedia);
  }

  editStream(request: ImageEditRequest): AsyncIterable<ImageStreamEvent> {
    return streamEditedImages(this.http, request, this.fetchMedia);
  }

  /** Closes the adapter's own connection pool (shutdown, tests). */
  close(): Promise<void> {
    return this.http.close();
  }
}
