import { credentialsOf, hashSecret, judgeSecret, keyIdOfSecret, newKeyId, newKeySecret, NO_CREDENTIALS } from '../../../src/domain/keys/key-secrets';

const NOW = Date.UTC(2027, 0, 1);
const only = (hex: string) => credentialsOf({ secretHash: hex, previousSecretHash: null, previousSecretUntil: null });

test("a secret is its key's current secret by its stored hash, and nothing else is", () => {
  const secret = newKeySecret(newKeyId('live'));
  const other = newKeySecret(keyIdOfSecret(secret)!); // same key id, another random part
  const hex = hashSecret(secret);
  expect(hex).toMatch(/^[0-9a-f]{64}$/);
  const key = only(hex);
  expect(judgeSecret(secret, key, NOW)).toBe('current');
  expect(judgeSecret(other, key, NOW)).toBe('refused');
  expect(judgeSecret(`${secret} `, key, NOW)).toBe('refused');
  expect(judgeSecret('', key, NOW)).toBe('refused');
  expect(judgeSecret(secret, NO_CREDENTIALS, NOW)).toBe('refused');
  // A stored value of another length (a truncated row) never matches, and never throws.
  expect(judgeSecret(secret, only(hex.slice(0, 62)), NOW)).toBe('refused');
});

test('the secret a rotation replaced is taken until its grace ends, not from that moment; the new one all along', () => {
  const id = newKeyId('test');
  const [old, current] = [newKeySecret(id), newKeySecret(id)];
  const key = credentialsOf({ secretHash: hashSecret(current), previousSecretHash: hashSecret(old), previousSecretUntil: new Date(NOW + 1000) });
  expect(judgeSecret(old, key, NOW)).toBe('previous');
  expect(judgeSecret(old, key, NOW + 999)).toBe('previous');
  expect(judgeSecret(old, key, NOW + 1000)).toBe('refused');
  expect(judgeSecret(current, key, NOW + 1000)).toBe('current');
  expect(judgeSecret(newKeySecret(id), key, NOW)).toBe('refused');
});

test('a secret of an expired key, current or replaced, is told expired from the moment of expiry; a wrong one is refused still', () => {
  const id = newKeyId('live');
  const [old, current] = [newKeySecret(id), newKeySecret(id)];
  const stored = { secretHash: hashSecret(current), previousSecretHash: hashSecret(old), previousSecretUntil: new Date(NOW + 5000) };
  const key = credentialsOf(stored, new Date(NOW + 1000));
  expect(judgeSecret(current, key, NOW + 999)).toBe('current');
  expect(judgeSecret(current, key, NOW + 1000)).toBe('expired');
  expect(judgeSecret(old, key, NOW + 1000)).toBe('expired');
  expect(judgeSecret(old, key, NOW + 5000)).toBe('refused');
  expect(judgeSecret(newKeySecret(id), key, NOW + 1000)).toBe('refused');
});
