import { createHmac } from 'node:crypto';

/**
 * SPEC: `X-Svc-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` — the
 * scheme Stripe's constructEvent verifies, so receivers can use it as they are.
 */
export function signWebhook(secret: string, timestamp: number, rawBody: string): string {
  const v1 = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
  return `t=${timestamp},v1=${v1}`;
}
