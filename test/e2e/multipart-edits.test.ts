/**
 * POST /v1/images/edits reads multipart only, and its text fields as sent: a JSON, text or empty
 * body is the 400 `unsupported_content_type` a JSON route gives a wrong Content-Type (it ran on no
 * fields and answered "prompt is required"); a text field whose bytes are not UTF-8 is a 400
 * `invalid_encoding` naming it (busboy turned them into U+FFFD and the call ran, and was billed);
 * a field given twice is a 400 saying so; an integer field is plain decimal digits. Nothing of
 * this is charged: the live account's balance never moves.
 */
import { makePng } from '../support/fake-openai-upstream';
import type { TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';

let acct: TestAccount;
let key: { id: string; secret: string };
// Registered before the gateway's fixture, so it reads the balance before the gateway closes.
afterAll(async () => {
  expect(await gw.balance(acct)).toBe(50);
});
const gw = useTestGateway();
beforeAll(async () => {
  acct = await gw.newAccount(50);
  key = await gw.newKey(acct);
});

const BOUNDARY = 'XyZ';
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;
const part = (name: string, value: string | Buffer, filename?: string) =>
  Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"\r\nContent-Type: image/png` : ''}\r\n\r\n`,
    ),
    Buffer.from(value),
    Buffer.from('\r\n'),
  ]);
const form = (...parts: Buffer[]) => Buffer.concat([...parts, Buffer.from(`--${BOUNDARY}--\r\n`)]);
const image = () => part('image', makePng(32, 32), 'in.png');

async function edit(body: Buffer | string | undefined, contentType?: string, extra: Record<string, string> = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${key.secret}`, ...extra };
  if (contentType) headers['content-type'] = contentType;
  const res = await fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as { error?: { type: string; code: string | null; param: string | null; message: string } } };
}

test.each([
  ['application/json', JSON.stringify({ prompt: 'a hat', model: 'svc-image-edit-1' })],
  ['text/plain', 'a hat'],
  ['application/x-www-form-urlencoded', 'prompt=a+hat'],
  [undefined, undefined],
])('a %s body is refused as the JSON routes refuse a wrong Content-Type, saying multipart is expected', async (contentType, body) => {
  const res = await edit(body, contentType);
  expect(res.status).toBe(400);
  expect(res.body.error).toEqual({
    type: 'invalid_request_error',
    code: 'unsupported_content_type',
    param: null,
    message: expect.stringContaining('multipart/form-data'),
  });
});

test.each([
  ['x\\xff\\xfey', Buffer.from([0x78, 0xff, 0xfe, 0x79])],
  ['CESU-8 \\xed\\xa0\\x80', Buffer.from([0x61, 0xed, 0xa0, 0x80])],
  ['a cut sequence \\xc3', Buffer.from([0x61, 0xc3])],
])('a prompt of bytes that are not UTF-8 (%s) is a 400 invalid_encoding naming it, with and without an Idempotency-Key', async (_label, bytes) => {
  for (const extra of [{}, { 'idempotency-key': `bad-utf8-${bytes.toString('hex')}` }] as Record<string, string>[]) {
    const res = await edit(form(part('prompt', bytes), image()), MULTIPART, extra);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ type: 'invalid_request_error', code: 'invalid_encoding', param: 'prompt', message: expect.stringContaining('UTF-8') });
  }
  const inModel = await edit(form(part('prompt', 'a hat'), part('model', bytes), image()), MULTIPART);
  expect([inModel.status, inModel.body.error?.param, inModel.body.error?.code]).toEqual([400, 'model', 'invalid_encoding']);
});

test.each([['n'], ['prompt'], ['model']])('%s given twice is a 400 saying it was given more than once', async (name) => {
  const value = name === 'n' ? '1' : name === 'model' ? 'svc-image-edit-1' : 'a hat';
  const parts = [part('prompt', 'a hat'), part('model', 'svc-image-edit-1'), part('n', '1'), part(name, value)];
  const res = await edit(form(...parts, image()), MULTIPART);
  expect(res.status).toBe(400);
  expect(res.body.error).toEqual({
    type: 'invalid_request_error',
    code: null,
    param: name,
    message: `Invalid '${name}': given more than once; give it once, as plain text.`,
  });
});

test.each([['04'], ['+1'], [' 1'], ['1e0'], ['0x1'], ['1.0']])('n=%j is a 400 naming n: integers are plain decimal digits', async (n) => {
  const res = await edit(form(part('prompt', 'a hat'), part('n', n), image()), MULTIPART);
  expect([res.status, res.body.error?.type, res.body.error?.param]).toEqual([400, 'invalid_request_error', 'n']);
});

test('a well-formed edit with UTF-8 text (and n=1) still runs, on a test key', async () => {
  const testAcct = await gw.newAccount(0);
  const testKey = await gw.newKey(testAcct, { mode: 'test' });
  const res = await fetch(`${gw.url}/v1/images/edits`, {
    method: 'POST',
    headers: { authorization: `Bearer ${testKey.secret}`, 'content-type': MULTIPART },
    body: form(part('prompt', 'un chapeau, café ☕'), part('n', '1'), image()),
  });
  expect(res.status).toBe(200);
});

test.each([
  ['16 of image and 1 of image[]', 16, 1],
  ['9 of each', 9, 9],
  ['17 of image', 17, 0],
])('more than 16 images (%s) is a 400 naming image that says so, and nothing is charged', async (_label, plain, bracketed) => {
  const files = [...Array.from({ length: plain }, () => image()), ...Array.from({ length: bracketed }, () => part('image[]', makePng(8, 8), 'b.png'))];
  const res = await edit(form(part('prompt', 'a hat'), ...files), MULTIPART);
  expect([res.status, res.body.error?.type, res.body.error?.param]).toEqual([400, 'invalid_request_error', 'image']);
  expect(res.body.error?.message).toMatch(/16/);
});
