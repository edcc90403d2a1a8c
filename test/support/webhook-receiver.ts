import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

export interface ReceivedEvent {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
  /** Which of the secrets given to `verifyWith` verified the signature (Stripe's constructEvent). */
  verifiedWith: string | null;
  at: number;
}

/**
 * A webhook receiver as a customer would write one: it verifies every signature with Stripe's
 * constructEvent (the same `t=…,v1=…` HMAC scheme, 300 s tolerance) before trusting the body.
 */
export async function startWebhookReceiver() {
  const received: ReceivedEvent[] = [];
  let secrets: string[] = [];
  let failNext = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let verifiedWith: string | null = null;
      for (const secret of secrets) {
        try {
          Stripe.webhooks.constructEvent(raw, String(req.headers['x-svc-signature']), secret, 300);
          verifiedWith = secret;
          break;
        } catch {
          /* try the next secret */
        }
      }
      received.push({ headers: req.headers, raw, body: JSON.parse(raw), verifiedWith, at: Date.now() });
      if (failNext > 0) {
        failNext--;
        res.writeHead(500).end('receiver is down');
        return;
      }
      res.writeHead(verifiedWith ? 200 : 400).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    verifyWith(list: string[]) {
      secrets = list;
    },
    failNextRequests(n: number) {
      failNext = n;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
