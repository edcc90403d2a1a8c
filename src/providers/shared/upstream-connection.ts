import type { Dispatcher } from 'undici';
import type { FetchMedia } from './fetch-media';
import type { Propagate } from './propagate';

/** How an adapter reaches its upstream: every provider's options start with these. */
export interface UpstreamConnection {
  /** e.g. `https://queue.fal.run`; an OpenAI-compatible one up to and including its version prefix, `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Sent as the upstream's credential when set. */
  apiKey?: string;
  /** Defaults to a keep-alive Agent owned (and closed) by the adapter. */
  dispatcher?: Dispatcher;
  /** Tracing on: each upstream request carries the current span's traceparent. */
  propagate?: Propagate;
}

/** A provider whose results are files it hosts (fal's queue, Replicate): it must be able to fetch them. */
export interface MediaUpstreamOptions extends UpstreamConnection {
  fetchMedia: FetchMedia;
}
