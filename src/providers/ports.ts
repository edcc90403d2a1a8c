/**
 * The typed interfaces every model provider implements, one per capability. The domain owns them
 * (domain/chat/chat-port, domain/images/image-port, domain/video/video-port); this module gathers
 * them for the adapters. The catalog decides which implementation serves a model. Providers
 * throw DomainError (upstream_error, content_policy_violation) and never leak upstream internals.
 */

export type {
  GeneratedImage,
  GeneratedImages,
  ImageAnswerAbout,
  ImageEditProvider,
  ImageEditRequest,
  ImageGenerationRequest,
  ImageProvider,
  ImageStreamEvent,
  InputFile,
} from '../domain/images/image-port';
export type { ImageOptions } from '../domain/images/image-options';
export type { VideoJobSpec, VideoPollResult, VideoProvider } from '../domain/video/video-port';

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
  StreamStamp,
  ChatUsage,
  ChoiceDelta,
  ContentPart,
  FinishReason,
  FunctionTool,
  ToolCall,
  ToolCallDelta,
} from '../domain/chat/chat-port';
