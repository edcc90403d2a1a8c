import type { Dispatcher } from 'undici';
import type { GeneratedImage } from '../ports';
import type { Propagate } from './propagate';

/** How a provider whose results are files reaches its upstream (fal's queue, Replicate). */
export interface MediaUpstreamOptions {
  /** e.g. `https://queue.fal.run`, `https://api.replicate.com`. */
  baseUrl: string;
  apiKey?: string;
  /** Downloads output files; wired to the SSRF-safe outbound client. */
  fetchMedia: (url: string) => Promise<GeneratedImage>;
  /** Defaults to a keep-alive Agent owned (and closed) by the adapter. */
  dispatcher?: Dispatcher;
  /** Tracing on: each upstream request carries the current span's traceparent. */
  propagate?: Propagate;
}
