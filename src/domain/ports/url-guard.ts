/** Checks a URL a caller hands in (CONTRACT "URLs that the caller hands in"); throws 400 naming `param`. */
export interface UrlGuard {
  /** Source media (image_url, video_url, reference_image_urls): https or http. */
  checkMediaUrl(url: unknown, param: string): Promise<string>;
  /** Webhook targets: https only unless WEBHOOK_ALLOW_LOCAL. */
  checkWebhookUrl(url: unknown, param: string): Promise<string>;
}
