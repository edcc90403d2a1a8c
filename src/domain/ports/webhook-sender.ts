/** Sends one webhook POST through the SSRF-safe outbound client; never throws. */
export interface WebhookSender {
  post(url: string, headers: Record<string, string>, body: string): Promise<{ statusCode: number | null; error: string | null }>;
}
