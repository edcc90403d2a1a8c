/**
 * The typed interfaces every model provider implements, one per capability. Domain services
 * only see these; the catalog decides which implementation serves a model. Providers throw
 * DomainError (upstream_error, content_policy_violation) and never leak upstream internals.
 */

import type { ImageOptions } from '../domain/images/image-options';

export type { ImageOptions };

// The chat capability's types live with the domain that owns them.
export type {
  AssistantMessage,
  ChatChoice,
  ChatMessage,
  ChatOptions,
  ChatProvider,
  ChatRequest,
  ChatResult,
  ChatStreamEvent,
  ChatUsage,
  ChoiceDelta,
  ContentPart,
  FinishReason,
  FunctionTool,
  ToolCall,
  ToolCallDelta,
} from '../domain/chat/chat-port';

export interface GeneratedImage {
  data: Buffer;
  contentType: string;
}

export interface ImageGenerationRequest {
  upstreamModel: string;
  prompt: string;
  negativePrompt?: string;
  n: number;
  width: number;
  height: number;
  seed?: number;
  stylePreset?: string;
  /** True for the creative group, which skips provider-side content filtering. */
  creative: boolean;
  /** gpt-image options the model takes, as the client sent them. */
  options?: ImageOptions;
  user?: string;
  signal?: AbortSignal;
}

export interface ImageProvider {
  generate(request: ImageGenerationRequest): Promise<GeneratedImage[]>;
}

export interface InputFile {
  data: Buffer;
  filename: string;
  contentType: string;
}

export interface ImageEditRequest {
  upstreamModel: string;
  prompt: string;
  images: InputFile[];
  mask?: InputFile;
  n: number;
  /** Output size; when absent the provider keeps the first input image's size. */
  width?: number;
  height?: number;
  seed?: number;
  options?: ImageOptions;
  user?: string;
  signal?: AbortSignal;
}

export interface ImageEditProvider {
  edit(request: ImageEditRequest): Promise<GeneratedImage[]>;
}

export interface VideoJobSpec {
  jobId: string;
  upstreamModel: string;
  kind: 'video' | 'motion-control';
  prompt?: string;
  durationSeconds: number;
  resolution?: '480p' | '720p' | '1080p';
  aspectRatio?: string;
  audio?: boolean;
  imageUrl?: string;
  referenceImageUrls?: string[];
  videoUrl?: string;
  keepOriginalSound?: boolean;
  characterOrientation?: 'image' | 'video';
}

export type VideoPollResult =
  | { state: 'processing' }
  | { state: 'completed'; video: GeneratedImage }
  | { state: 'failed'; reason: string };

export interface VideoProvider {
  /** Hands the job to the provider; returns the provider's queue id. */
  submit(spec: VideoJobSpec): Promise<{ queueId: string }>;
  /**
   * Asks where the job is. Stateless on our side: everything needed is passed in, so a
   * restarted gateway can poll a job submitted before the crash.
   */
  poll(job: { queueId: string; submittedAt: Date; spec: VideoJobSpec }): Promise<VideoPollResult>;
}
