import type { GeneratedImage } from '../ports';

/**
 * Downloads a URL an upstream handed back (an image or a video it hosts). Injected so the
 * composition root can route it through the SSRF-safe outbound client; the adapters never
 * fetch arbitrary URLs themselves.
 */
export type FetchMedia = (url: string) => Promise<GeneratedImage>;
