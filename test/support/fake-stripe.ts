/**
 * A fake of the parts of Stripe the gateway uses, on a real socket, speaking Stripe's wire: the
 * API (`POST /v1/checkout/sessions` with a form-encoded body and a secret key, `GET
 * /v1/checkout/sessions/{id}`, errors in Stripe's `{ error: { type, message } }` shape, an
 * `Idempotency-Key` answered again as the first time), a hosted Checkout page per session
 * (`GET /checkout/{id}`, whose Pay button completes the session, sends its signed
 * `checkout.session.completed` to the webhook endpoint and redirects to the session's
 * success_url, or holds it back until `releaseHeld()` as a webhook delivered a moment after the
 * buyer is back; Cancel goes to its cancel_url), and events signed as Stripe signs them
 * (`Stripe.webhooks.generateTestHeaderString`), sent to the webhook endpoint over HTTP.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Stripe from 'stripe';
import { closeNow, listenLocal } from './local-http';

export const FAKE_STRIPE_KEY = 'sk_test_fake0123456789';
export const FAKE_STRIPE_WEBHOOK_SECRET = 'whsec_fake0123456789abcdef';

type Form = { [key: string]: string | Form | Form[] | string[] };

/** A Checkout Session as Stripe answers it (the fields the gateway and a test read). */
export interface FakeSession {
  id: string;
  object: 'checkout.session';
  mode: string;
  status: 'open' | 'complete' | 'expired';
  payment_status: 'unpaid' | 'paid';
  amount_total: number;
  currency: string;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  success_url: string;
  cancel_url: string;
  url: string;
  payment_intent: string | null;
  /** The body the API was sent, decoded (line items and all). */
  request: Form;
  /** The charge's refunds so far, in cents. */
  refunded: number;
}

export interface StripeEvent {
  id: string;
  object: 'event';
  type: string;
  created: number;
  data: { object: Record<string, unknown> };
  [key: string]: unknown;
}

/** `a[b][0][c]=x` → `{ a: { b: [{ c: 'x' }] } }`, as Stripe reads a form body. */
export function decodeForm(body: string): Form {
  const root: Form = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = key.split(/\[|\]\[|\]/).filter((p) => p !== '');
    let node: any = root;
    path.forEach((part, i) => {
      const last = i === path.length - 1;
      const index = /^\d+$/.test(part) ? Number(part) : part;
      if (last) node[index] = value;
      else node = node[index] ??= /^\d+$/.test(path[i + 1]) ? [] : {};
    });
  }
  return root;
}

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req') }).end(JSON.stringify(body));
};
const stripeError = (res: ServerResponse, status: number, type: string, message: string, param?: string) =>
  json(res, status, { error: { type, message, ...(param ? { param } : {}) } });

export async function startFakeStripe(opts: { secretKey?: string; webhookSecret?: string } = {}) {
  const secretKey = opts.secretKey ?? FAKE_STRIPE_KEY;
  const webhookSecret = opts.webhookSecret ?? FAKE_STRIPE_WEBHOOK_SECRET;
  const sessions = new Map<string, FakeSession>();
  const byIdempotencyKey = new Map<string, string>();
  /** Every API request, as sent. */
  const requests: Array<{ method: string; path: string; headers: IncomingMessage['headers']; form: Form }> = [];
  let failNext = 0;
  let origin = '';
  let webhookUrl: string | undefined;
  let holding = false;
  /** Checkout pages' events held back (`holdEvents(true)`), signed when they were made. */
  const held: Array<{ payload: string; header: string }> = [];

  function event(type: string, object: Record<string, unknown>): StripeEvent {
    return {
      id: newId('evt'),
      object: 'event',
      api_version: '2026-10-28.endive',
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
      data: { object },
    };
  }

  /** The event's body and its Stripe-Signature header (`timestamp` in Unix seconds; now by default). */
  function sign(e: StripeEvent | string, o: { secret?: string; timestamp?: number } = {}): { payload: string; header: string } {
    const payload = typeof e === 'string' ? e : JSON.stringify(e, null, 2);
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: o.secret ?? webhookSecret, timestamp: o.timestamp });
    return { payload, header };
  }

  /** Every event sent to the webhook endpoint, in order (the Checkout page's among them). */
  const sent: StripeEvent[] = [];

  /** POSTs a signed body to the webhook endpoint as Stripe does; answers what it said. */
  async function send(signed: { payload: string; header?: string }): Promise<{ status: number; body: any }> {
    if (!webhookUrl) throw new Error('fake Stripe: no webhook endpoint set');
    sent.push(JSON.parse(signed.payload) as StripeEvent);
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
    };
    if (signed.header !== undefined) headers['stripe-signature'] = signed.header;
    const res = await fetch(webhookUrl, { method: 'POST', headers, body: signed.payload });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  /** The session's state as a webhook object (no `request` or `refunded`: those are the fake's). */
  const sessionObject = (s: FakeSession): Record<string, unknown> => {
    const { request: _request, refunded: _refunded, ...rest } = s;
    return rest;
  };

  /** The session paid (or, `paid: false`, completed with a payment still under way); answers its event. */
  function complete(id: string, o: { paid?: boolean } = {}): StripeEvent {
    const s = sessions.get(id);
    if (!s) throw new Error(`fake Stripe: no session ${id}`);
    s.status = 'complete';
    s.payment_intent ??= newId('pi');
    if (o.paid !== false) s.payment_status = 'paid';
    return event('checkout.session.completed', sessionObject(s));
  }

  /** A delayed payment's outcome for a completed session. */
  function asyncPayment(id: string, succeeded: boolean): StripeEvent {
    const s = sessions.get(id)!;
    if (succeeded) s.payment_status = 'paid';
    return event(succeeded ? 'checkout.session.async_payment_succeeded' : 'checkout.session.async_payment_failed', sessionObject(s));
  }

  function expire(id: string): StripeEvent {
    const s = sessions.get(id)!;
    s.status = 'expired';
    return event('checkout.session.expired', sessionObject(s));
  }

  /** Refunds `cents` more of the session's charge; answers `charge.refunded` with the charge's totals. */
  function refund(id: string, cents: number): StripeEvent {
    const s = sessions.get(id)!;
    s.refunded = Math.min(s.amount_total, s.refunded + cents);
    return event('charge.refunded', {
      id: `ch_${s.payment_intent!.slice(3)}`,
      object: 'charge',
      amount: s.amount_total,
      amount_captured: s.amount_total,
      amount_refunded: s.refunded,
      currency: s.currency,
      paid: true,
      refunded: s.refunded >= s.amount_total,
      payment_intent: s.payment_intent,
      status: 'succeeded',
    });
  }

  async function createSession(req: IncomingMessage, res: ServerResponse, form: Form) {
    const key = req.headers['idempotency-key'];
    const again = typeof key === 'string' ? byIdempotencyKey.get(key) : undefined;
    if (again) return json(res, 200, sessionObject(sessions.get(again)!));
    if (failNext > 0) {
      failNext--;
      return stripeError(res, 500, 'api_error', 'An unknown error occurred.');
    }
    const items = form.line_items as Form[] | undefined;
    if (form.mode !== 'payment' || !items?.length || typeof form.success_url !== 'string') {
      return stripeError(res, 400, 'invalid_request_error', 'mode, line_items and success_url are required.', 'line_items');
    }
    const amount = items.reduce((sum, item) => sum + Number((item.price_data as Form).unit_amount) * Number(item.quantity ?? 1), 0);
    if (!Number.isSafeInteger(amount) || amount < 50) {
      return stripeError(res, 400, 'invalid_request_error', 'The Checkout Session total must be at least $0.50 usd.', 'line_items');
    }
    const id = `cs_test_${randomBytes(24).toString('hex')}`;
    const session: FakeSession = {
      id,
      object: 'checkout.session',
      mode: 'payment',
      status: 'open',
      payment_status: 'unpaid',
      amount_total: amount,
      currency: String((items[0].price_data as Form).currency),
      client_reference_id: typeof form.client_reference_id === 'string' ? form.client_reference_id : null,
      metadata: (form.metadata as Record<string, string> | undefined) ?? {},
      success_url: form.success_url,
      cancel_url: String(form.cancel_url ?? ''),
      url: `${origin}/checkout/${id}`,
      payment_intent: null,
      request: form,
      refunded: 0,
    };
    sessions.set(id, session);
    if (typeof key === 'string') byIdempotencyKey.set(key, id);
    json(res, 200, sessionObject(session));
  }

  function checkoutPage(res: ServerResponse, s: FakeSession) {
    const name = String(((s.request.line_items as Form[])[0].price_data as Form & { product_data: Form }).product_data.name);
    const html = `<!doctype html><html><head><meta charset="utf-8"><title>Fake Checkout</title></head><body>
<h1>Pay ${(s.amount_total / 100).toFixed(2)} ${s.currency.toUpperCase()}</h1><p>${name}</p>
<form method="post" action="/checkout/${s.id}/pay"><button type="submit">Pay</button></form>
<form method="post" action="/checkout/${s.id}/cancel"><button type="submit">Cancel</button></form>
</body></html>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const body = await readBody(req);
      const page = /^\/checkout\/(cs_[A-Za-z0-9_]+)(?:\/(pay|cancel))?$/.exec(url.pathname);
      if (page) {
        const s = sessions.get(page[1]);
        if (!s) return res.writeHead(404).end('no such session');
        if (req.method === 'GET' && !page[2]) return checkoutPage(res, s);
        if (req.method !== 'POST') return res.writeHead(405).end();
        if (page[2] === 'cancel') return res.writeHead(303, { location: s.cancel_url }).end();
        if (s.status === 'open') {
          const signed = sign(complete(s.id));
          if (holding) held.push(signed);
          else await send(signed);
        }
        return res.writeHead(303, { location: s.success_url.replace('{CHECKOUT_SESSION_ID}', s.id) }).end();
      }
      const form = decodeForm(body);
      requests.push({ method: req.method ?? '', path: url.pathname, headers: req.headers, form });
      if (req.headers.authorization !== `Bearer ${secretKey}`) {
        return stripeError(res, 401, 'invalid_request_error', 'Invalid API Key provided.');
      }
      if (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') return createSession(req, res, form);
      const one = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'GET' && one) {
        const s = sessions.get(one[1]);
        return s ? json(res, 200, sessionObject(s)) : stripeError(res, 404, 'invalid_request_error', `No such checkout.session: '${one[1]}'`, 'id');
      }
      stripeError(res, 404, 'invalid_request_error', `Unrecognized request URL (${req.method} ${url.pathname}).`);
    })();
  });
  origin = await listenLocal(server);

  return {
    url: origin,
    secretKey,
    webhookSecret,
    sessions,
    requests,
    sent,
    /** Where events go: the gateway's POST /webhooks/stripe. */
    setWebhookUrl(url: string) {
      webhookUrl = url;
    },
    /** While on, a Checkout page's Pay sends the buyer back at once and keeps its event for `releaseHeld`. */
    holdEvents(on: boolean) {
      holding = on;
    },
    /** Sends the held events, in order; answers what the endpoint said to each. */
    async releaseHeld(): Promise<Array<{ status: number; body: any }>> {
      const answers: Array<{ status: number; body: any }> = [];
      while (held.length > 0) answers.push(await send(held.shift()!));
      return answers;
    },
    /** The next `n` session creations answer 500. */
    failNextSessions(n: number) {
      failNext = n;
    },
    event,
    sign,
    send,
    /** Signs `e` now with the endpoint's secret and sends it. */
    deliver: (e: StripeEvent) => send(sign(e)),
    complete,
    asyncPayment,
    expire,
    refund,
    close: () => closeNow(server),
  };
}

export type FakeStripe = Awaited<ReturnType<typeof startFakeStripe>>;
