import type { FieldPath } from '../errors/field-path';

/** Checks a URL a caller hands in (CONTRACT "URLs that the caller hands in"); throws 400 naming the field at `path`. */
export interface UrlGuard {
  /** Source media (image_url, video_url, reference_image_urls): https or http. */
  checkMediaUrl(url: unknown, path: FieldPath): Promise<string>;
  /** Webhook targets: https only unless WEBHOOK_ALLOW_LOCAL. */
  checkWebhookUrl(url: unknown, path: FieldPath): Promise<string>;
}
