import type { WebhookSender } from '../../domain/ports/webhook-sender';
import { OutboundRequestError, SafeHttpClient } from './safe-http-client';
import type { Tracer } from '../observability/tracing';

/**
 * Webhook POSTs through the SSRF-safe client: no redirects (a 3xx is a failed attempt), the
 * status within WEBHOOK_TIMEOUT_SECONDS decides; the reply body is read up to 4 kB for at most a
 * second and discarded, so a receiver answering 200 with a 5 MB or trickled body has delivered.
 */
export class WebhookHttpSender implements WebhookSender {
  private readonly client: SafeHttpClient;

  /** `tracer`: each attempt is a client span of its own, and the receiver gets its `traceparent`. */
  constructor(private readonly options: { allowLocal: boolean; timeoutSeconds: number; tracer?: Tracer }) {
    this.client = new SafeHttpClient({
      allowLocal: options.allowLocal,
      defaultTimeoutMs: options.timeoutSeconds * 1000,
      maxResponseBytes: 64 * 1024,
      userAgent: 'Svc-Webhook/1.0',
    });
  }

  post(url: string, headers: Record<string, string>, body: string): Promise<{ statusCode: number | null; error: string | null }> {
    const tracer = this.options.tracer;
    if (!tracer) return this.send(url, headers, body);
    // The receiver's host only: a webhook URL's path or query may carry the customer's own token.
    return tracer.outbound(
      'webhook delivery',
      { 'server.address': hostOf(url) },
      (traceHeaders) => this.send(url, { ...headers, ...traceHeaders }, body),
      (sent) => ({ status: sent.statusCode ?? undefined, error: sent.error ?? undefined }),
    );
  }

  private async send(url: string, headers: Record<string, string>, body: string): Promise<{ statusCode: number | null; error: string | null }> {
    try {
      const res = await this.client.request(url, {
        method: 'POST',
        headers,
        body,
        allowHttp: this.options.allowLocal,
        discardBodyAfter: 4 * 1024,
        discardWindowMs: 1_000,
      });
      return { statusCode: res.status, error: null };
    } catch (err) {
      const reason = err instanceof OutboundRequestError ? err.reason : 'network';
      return { statusCode: null, error: reason };
    }
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
