/**
 * Hostile uploads to POST /v1/images/edits over real HTTP: image bombs refused by their
 * declared size before any decoding, the whole-body cap while streaming, the rate limit counted
 * before the upload is read, and test keys bounded per request and per key. Every refusal is
 * checked for its status, its OpenAI error body with `param`, and an unmoved balance.
 * (No GraphQL operation takes an image upload, so REST is the only door here.)
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import sharp from 'sharp';
import type { TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { jpegHeaderOnly, pngBomb, pngHeaderOnly, webpHeaderOnly } from '../support/image-bombs';
import { makePng } from '../support/fake-openai-upstream';
import { allCallsBilled } from '../support/billed';
import { pollUntil } from '../support/poll';

const gw = useTestGateway();

async function account(credits = 50): Promise<{ acct: TestAccount; live: string; test: string }> {
  const acct = await gw.newAccount(credits);
  return { acct, live: (await gw.newKey(acct)).secret, test: (await gw.newKey(acct, { mode: 'test' })).secret };
}

function editForm(files: Record<string, Buffer>, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  form.set('prompt', 'add a hat');
  for (const [name, value] of Object.entries(fields)) form.set(name, value);
  for (const [name, data] of Object.entries(files)) form.append(name, new Blob([data], { type: 'image/png' }), `${name}.png`);
  return form;
}

async function edit(secret: string, form: FormData): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${secret}` }, body: form });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** A raw POST to the edit endpoint that sends `first` and then waits (the rest of the body never comes). */
function stalledUpload(secret: string, declaredLength: number, first: Buffer): Promise<{ status: number; body: any; headers: IncomingMessage['headers'] }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${gw.url}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'multipart/form-data; boundary=b0undary', 'content-length': declaredLength },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        resolve({ status: res.statusCode!, body: JSON.parse(text), headers: res.headers });
        req.destroy();
      });
    });
    req.on('error', reject);
    req.write(first);
  });
}

/** A 64x64 PNG with random pixels (so it is not tiny), and a heavy but valid 2048x2048 one. */
const noisyPng = (side: number) =>
  sharp({ create: { width: side, height: side, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
    .png({ compressionLevel: 1 })
    .toBuffer();

describe('image bombs are refused by their declared size, nothing charged', () => {
  const bombs: [string, () => Buffer][] = [
    ['a real 20000x20000 PNG of ~50 kB', () => pngBomb(20000)],
    ['a PNG header declaring 4096x4096', () => pngHeaderOnly(4096, 4096)],
    ['a JPEG header declaring 20000x20000', () => jpegHeaderOnly(20000, 20000)],
    ['a WebP (VP8X) header declaring 20000x20000', () => webpHeaderOnly(20000, 20000)],
  ];

  test.each(bombs)('as image: %s', async (_name, bomb) => {
    const { acct, live } = await account();
    for (const field of ['image', 'image[]']) {
      const res = await edit(live, editForm({ [field]: bomb() }));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({
        type: 'invalid_request_error',
        param: 'image',
        code: 'image_too_large',
        message: expect.stringContaining('2048'),
      });
    }
    expect(await gw.balance(acct)).toBe(50);
  });

  test.each(bombs)('as a later image[] part: %s (each part is checked, and named by its index)', async (_name, bomb) => {
    const { acct, live } = await account();
    const form = new FormData();
    form.set('prompt', 'add a hat');
    form.append('image[]', new Blob([makePng(64, 64)], { type: 'image/png' }), 'a.png');
    form.append('image[]', new Blob([bomb()], { type: 'image/png' }), 'b.png');
    const res = await edit(live, form);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'image[1]', code: 'image_too_large' });
    expect(await gw.balance(acct)).toBe(50);
  });

  test('a truncated PNG as a later image[] part is a 400 naming it, nothing charged; as the first, too', async () => {
    const { acct, live } = await account();
    const whole = await noisyPng(64);
    const truncated = whole.subarray(0, Math.floor(whole.length / 2));
    for (const [parts, param] of [
      [[whole, truncated], 'image[1]'],
      [[truncated, whole], 'image[0]'],
      [[whole, whole, truncated], 'image[2]'],
    ] as const) {
      const form = new FormData();
      form.set('prompt', 'add a hat');
      parts.forEach((data, i) => form.append('image[]', new Blob([data], { type: 'image/png' }), `${i}.png`));
      const res = await edit(live, form);
      expect([res.status, res.body.error?.type]).toEqual([400, 'invalid_request_error']);
      // The header of a truncated PNG is whole: the first is refused when decoded, by the same name.
      expect(res.body.error.param).toMatch(param === 'image[0]' ? /^image(\[0\])?$/ : new RegExp(`^${param.replace(/[[\]]/g, '\\$&')}$`));
    }
    expect(await gw.balance(acct)).toBe(50);
    const ok = new FormData();
    ok.set('prompt', 'add a hat');
    ok.append('image[]', new Blob([whole], { type: 'image/png' }), 'a.png');
    ok.append('image[]', new Blob([whole], { type: 'image/png' }), 'b.png');
    expect((await edit(live, ok)).status).toBe(200);
  });

  test.each(bombs)('as mask: %s', async (_name, bomb) => {
    const { acct, live } = await account();
    const res = await edit(live, editForm({ image: makePng(64, 64), mask: bomb() }));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'mask', code: 'image_too_large' });
    expect(await gw.balance(acct)).toBe(50);
  });

  test('a mask of other dimensions than the image is refused naming it; one of the same dimensions is edited', async () => {
    const { acct, live } = await account();
    for (const mask of [makePng(32, 64), makePng(64, 32), makePng(65, 64)]) {
      const res = await edit(live, editForm({ image: makePng(64, 64), mask }));
      expect([res.status, res.body.error?.param, res.body.error?.code]).toEqual([400, 'mask', 'invalid_mask']);
    }
    expect(await gw.balance(acct)).toBe(50);
    const ok = await edit(live, editForm({ image: makePng(64, 64), mask: makePng(64, 64) }));
    expect(ok.status).toBe(200);
  });

  test.each(['png', 'jpeg', 'webp'] as const)(
    'a masked edit written as %s: the format asked for, edited where the mask is clear, charged once',
    async (format) => {
      const { acct, live } = await account();
      // Clear (edit) on the left half, opaque (keep) on the right.
      const alpha = Buffer.alloc(64 * 64 * 4);
      for (let i = 0; i < 64 * 64; i++) alpha[i * 4 + 3] = i % 64 >= 32 ? 255 : 0;
      const mask = await sharp(alpha, { raw: { width: 64, height: 64, channels: 4 } })
        .png()
        .toBuffer();
      const res = await edit(
        live,
        editForm({ image: makePng(64, 64), mask }, { prompt: 'paint the left', model: 'svc-image-edit-1', output_format: format, response_format: 'b64_json' }),
      );
      expect(res.status).toBe(200);
      const bytes = Buffer.from(res.body.data[0].b64_json, 'base64');
      expect(await sharp(bytes).metadata()).toMatchObject({ format, width: 64, height: 64 });
      // The kept half is the input's grey (JPEG flattens its half-transparent grey on white); the edited half is tinted.
      const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const spread = (x: number, y: number) => {
        const rgb = [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)];
        return Math.max(...rgb) - Math.min(...rgb);
      };
      expect(spread(48, 32)).toBeLessThanOrEqual(6);
      expect(spread(16, 32)).toBeGreaterThan(12);
      expect(await gw.balance(acct)).toBeCloseTo(50 - Number(res.headers.get('x-svc-credits')), 9);
    },
  );

  test('a client that leaves while a provider that ignores the abort (the simulator) makes its images pays nothing', async () => {
    const { acct, live } = await account();
    // A 2048x2048 WebP takes the simulator a while (about 180 ms on the fastest machine yet), and
    // one image gives it no moment to stop: the client leaves once the call holds its credits.
    const abort = new AbortController();
    const left = fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${live}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'svc-creative-v8',
        prompt: 'left while drawn',
        size: '2048x2048',
        n: 1,
        response_format: 'b64_json',
        output_format: 'webp',
      }),
      signal: abort.signal,
    }).then(
      () => 'answered',
      () => 'gave up',
    );
    await pollUntil(
      async () => gw.gateway.services.leaseBook.inFlightFor(acct.id),
      (n) => n > 0,
      10_000,
      5,
    );
    abort.abort();
    expect(await left).toBe('gave up');
    // Settled once the simulator is done with it: nothing charged.
    await allCallsBilled(gw, acct.id);
    expect(await gw.balance(acct)).toBe(50);
  });

  test('a file that is not PNG, JPEG or WebP is refused naming the field', async () => {
    const { acct, live } = await account();
    const gif = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
      .gif()
      .toBuffer();
    for (const [files, param] of [
      [{ image: gif }, 'image'],
      [{ image: makePng(8, 8), mask: Buffer.from('not an image') }, 'mask'],
    ] as const) {
      const res = await edit(live, editForm(files));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param, code: 'invalid_image_format' });
    }
    expect(await gw.balance(acct)).toBe(50);
  });

  test('a decompression bomb sent with a test key while another client polls /healthz is refused, and /healthz keeps answering', async () => {
    const { acct, test } = await account();
    const health: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) health.push((await fetch(`${gw.url}/healthz`)).status);
    })();
    const bomb = pngBomb(20000);
    expect(bomb.length).toBeLessThan(200_000);
    const results = await Promise.all([1, 2, 3].map(() => edit(test, editForm({ image: bomb }))));
    polling = false;
    await poller;
    for (const res of results) {
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'image', code: 'image_too_large' });
    }
    expect(health.length).toBeGreaterThan(0);
    expect(health.every((s) => s === 200)).toBe(true);
    expect(await gw.balance(acct)).toBe(50);
  });

  test('a heavy but valid 2048x2048 input is edited (within bounds, not refused)', async () => {
    const { acct, live } = await account();
    const res = await edit(live, editForm({ image: await noisyPng(2048) }, { response_format: 'b64_json' }));
    expect(res.status).toBe(200);
    const meta = await sharp(Buffer.from(res.body.data[0].b64_json, 'base64')).metadata();
    expect([meta.width, meta.height]).toEqual([2048, 2048]);
    expect(await gw.balance(acct)).toBe(48);
  });
});

describe('multipart bodies are capped in all, while streaming', () => {
  test('a declared Content-Length over 50 MB is a 413 before the body is read', async () => {
    const { acct, live } = await account();
    const res = await stalledUpload(live, 60 * 1024 * 1024, Buffer.from('--b0undary\r\n'));
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ type: 'request_too_large', message: expect.stringContaining('50 MB') });
    expect(res.headers.connection).toBe('close');
    expect(await gw.balance(acct)).toBe(50);
  });

  test('a chunked body of three 18 MB files (each under the per-file limit) is cut at the total cap: 413', async () => {
    const { acct, live } = await account();
    const file = Buffer.alloc(18 * 1024 * 1024, 7);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(Buffer.from('--b0undary\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nx\r\n'));
        for (let i = 0; i < 3; i++) {
          controller.enqueue(
            Buffer.from(`--b0undary\r\nContent-Disposition: form-data; name="image[]"; filename="${i}.png"\r\nContent-Type: image/png\r\n\r\n`),
          );
          for (let at = 0; at < file.length; at += 1024 * 1024) controller.enqueue(file.subarray(at, at + 1024 * 1024));
          controller.enqueue(Buffer.from('\r\n'));
        }
        controller.enqueue(Buffer.from('--b0undary--\r\n'));
        controller.close();
      },
    });
    const res = await fetch(`${gw.url}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${live}`, 'content-type': 'multipart/form-data; boundary=b0undary' },
      body: stream,
      duplex: 'half',
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).error).toMatchObject({ type: 'request_too_large', message: expect.stringContaining('50 MB') });
    expect(await gw.balance(acct)).toBe(50);
  });
});

test('the image rate limit is counted before the upload is read: past it, a stalled upload is answered 429 at once', async () => {
  const { acct, live } = await account();
  // 30 image requests a minute per key; refused ones count too (they cost us their upload).
  for (let i = 0; i < 30; i++) expect((await edit(live, editForm({}))).status).toBe(400);
  const res = await stalledUpload(live, 5 * 1024 * 1024, Buffer.from('--b0undary\r\n'));
  expect(res.status).toBe(429);
  expect(res.body.error).toMatchObject({ type: 'rate_limit_exceeded' });
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  expect(await gw.balance(acct)).toBe(50);
});

describe('test keys are free, not unlimited', () => {
  test('pixels x n past 2048x2048 in one request is a 400 naming n (a live key may ask it)', async () => {
    const { acct, live, test } = await account();
    const body = { model: 'svc-creative-v8', prompt: 'x', size: '2048x2048', n: 2, response_format: 'b64_json' };
    const refused = await gw.api('POST', '/v1/images/generations', { token: test, body });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', param: 'n', code: 'test_key_pixel_limit' });
    const editRefused = await edit(test, editForm({ image: makePng(64, 64) }, { size: '2048x2048', n: '2' }));
    expect(editRefused.status).toBe(400);
    expect(editRefused.body.error).toMatchObject({ param: 'n', code: 'test_key_pixel_limit' });
    expect(await gw.balance(acct)).toBe(50);
    const paid = await gw.api('POST', '/v1/images/generations', { token: live, body: { ...body, size: '1024x1024' } });
    expect(paid.status).toBe(200);
  });

  test('a test key runs at most two image calls at once: the rest get 429 with Retry-After, and nothing moves', async () => {
    const { acct, test } = await account();
    const body = { model: 'svc-creative-v8', prompt: 'busy', size: '2048x2048', response_format: 'b64_json' };
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => gw.api('POST', '/v1/images/generations', { token: test, body: { ...body, seed: i } })),
    );
    const busy = results.filter((r) => r.status === 429);
    expect(busy.length).toBeGreaterThan(0);
    for (const r of busy) {
      expect(r.body.error).toMatchObject({ type: 'rate_limit_exceeded', code: 'test_key_busy', param: null });
      expect(r.headers.get('retry-after')).toBe('1');
    }
    expect(results.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    expect(await gw.balance(acct)).toBe(50);
  });
});
