import { hashSecret, keyIdOfSecret, newKeyId, newKeySecret, secretMatchesHash } from '../../../src/domain/keys/key-secrets';

test('a secret matches its own stored hash, hex or bytes, and nothing else does', () => {
  const secret = newKeySecret(newKeyId('live'));
  const other = newKeySecret(keyIdOfSecret(secret)!); // same key id, another random part
  const hex = hashSecret(secret);
  expect(hex).toMatch(/^[0-9a-f]{64}$/);
  for (const stored of [hex, Buffer.from(hex, 'hex')]) {
    expect(secretMatchesHash(secret, stored)).toBe(true);
    expect(secretMatchesHash(other, stored)).toBe(false);
    expect(secretMatchesHash(`${secret} `, stored)).toBe(false);
    expect(secretMatchesHash('', stored)).toBe(false);
  }
  // A stored value of another length (a truncated row) never matches, and never throws.
  expect(secretMatchesHash(secret, hex.slice(0, 62))).toBe(false);
  expect(secretMatchesHash(secret, Buffer.alloc(0))).toBe(false);
});
