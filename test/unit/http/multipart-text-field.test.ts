/**
 * Reading one text field of a whole multipart body before multer parses it (a streamed edit's
 * `stream`, which decides whether its Idempotency-Key is honoured): its value as sent, whatever the
 * case of the part's header; a file part of that name, another field's value, or a body with no
 * boundary give nothing.
 */
import { multipartTextField } from '../../../src/rest/raw-body';

const TYPE = 'multipart/form-data; boundary=b0und';
const part = (head: string, value: string) => `--b0und\r\n${head}\r\n\r\n${value}\r\n`;
const body = (...parts: string[]) => Buffer.from(parts.join('') + '--b0und--\r\n', 'latin1');

test('the value of the named text part, as sent', () => {
  const form = body(part('Content-Disposition: form-data; name="prompt"', 'stream true'), part('content-disposition: form-data; name="stream"', 'true'));
  expect(multipartTextField(form, TYPE, 'stream')).toBe('true');
  expect(multipartTextField(form, 'multipart/form-data; boundary="b0und"', 'stream')).toBe('true');
  expect(multipartTextField(body(part('Content-Disposition: form-data; name="stream"', 'false')), TYPE, 'stream')).toBe('false');
});

test.each([
  ['a file part of that name', body(part('Content-Disposition: form-data; name="stream"; filename="stream"\r\nContent-Type: text/plain', 'true'))],
  [
    'another field saying it',
    body(part('Content-Disposition: form-data; name="streams"', 'true'), part('Content-Disposition: form-data; name="x"', 'name="stream"')),
  ],
  ['no such part', body(part('Content-Disposition: form-data; name="prompt"', 'a hat'))],
])('nothing for %s', (_case, form) => {
  expect(multipartTextField(form, TYPE, 'stream')).toBeUndefined();
});

test('nothing without a boundary', () => {
  expect(multipartTextField(body(part('Content-Disposition: form-data; name="stream"', 'true')), 'multipart/form-data', 'stream')).toBeUndefined();
});
