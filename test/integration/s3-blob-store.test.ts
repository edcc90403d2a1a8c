/**
 * The bucket store against a real S3-protocol server: what it stores reads back whole and by
 * range, from another store on the same bucket; a blob larger than a part goes up in parts; a
 * bucket that goes down (between calls, or in the middle of a multipart upload) is a 503
 * storage_unavailable, leaves no half object, and what it held before is there once it is back.
 */
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { S3BlobStore } from '../../src/infra/media/s3-blob-store';
import { DomainError } from '../../src/domain/errors/domain-error';
import { startS3Bucket, type S3Bucket } from '../support/s3-bucket';

let bucket: S3Bucket;
const stores: S3BlobStore[] = [];
const newStore = () => {
  const store = new S3BlobStore({
    bucket: bucket.name,
    region: 'us-east-1',
    endpoint: bucket.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: bucket.env.AWS_ACCESS_KEY_ID, secretAccessKey: bucket.env.AWS_SECRET_ACCESS_KEY },
  });
  stores.push(store);
  return store;
};

beforeAll(async () => {
  bucket = await startS3Bucket();
});
afterAll(async () => {
  for (const s of stores) s.close();
  await bucket.close();
});

async function read(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const key = () => `med_${randomBytes(12).toString('hex')}`;

test('a blob put by one store is read by another, whole and by range; an absent key is null; a removed one is gone', async () => {
  const writer = newStore();
  const reader = newStore();
  const data = randomBytes(64 * 1024);
  const id = key();
  await writer.put(id, data);
  const blob = (await reader.open(id))!;
  expect(blob.size).toBe(data.length);
  expect((await read(blob.stream(0, data.length - 1))).equals(data)).toBe(true);
  expect((await read(blob.stream(1000, 1999))).equals(data.subarray(1000, 2000))).toBe(true);
  expect(await reader.open(key())).toBeNull();
  await writer.remove(id);
  expect(await reader.open(id)).toBeNull();
  // An absent key's delete is no error.
  await expect(writer.remove(id)).resolves.toBeUndefined();
});

test('a blob of several parts goes up as a multipart upload and reads back byte for byte', async () => {
  const store = newStore();
  const data = randomBytes(12 * 1024 * 1024);
  const id = key();
  const before = bucket.requests.length;
  await store.put(id, data);
  const sent = bucket.requests.slice(before);
  expect(sent.filter((r) => /^PUT .*partNumber=/.test(r))).toHaveLength(3);
  expect(sent.some((r) => /^POST .*uploadId=/.test(r))).toBe(true);
  const blob = (await store.open(id))!;
  expect(blob.size).toBe(data.length);
  const tail = 5 * 1024 * 1024 - 10;
  expect((await read(blob.stream(tail, tail + 99))).equals(data.subarray(tail, tail + 100))).toBe(true);
  expect((await read(blob.stream(0, data.length - 1))).equals(data)).toBe(true);
});

test('the bucket down in the middle of a multipart upload: storage_unavailable, no half object, the earlier blob served once it is back', async () => {
  const store = newStore();
  const earlier = randomBytes(32 * 1024);
  const earlierId = key();
  await store.put(earlierId, earlier);

  const id = key();
  // Down as the second part arrives: the upload was created and its first part may have gone up.
  const down = bucket.stopOn((req) => req.method === 'PUT' && /[?&]partNumber=2(&|$)/.test(req.url ?? ''));
  const err = (await store.put(id, randomBytes(12 * 1024 * 1024)).catch((e: unknown) => e)) as DomainError;
  await down;
  expect(err).toBeInstanceOf(DomainError);
  expect(err).toMatchObject({ type: 'service_unavailable', code: 'storage_unavailable', status: 503, retryAfterSeconds: 30 });
  // Reading while it is down is the same failure, not "absent".
  await expect(store.open(earlierId)).rejects.toMatchObject({ code: 'storage_unavailable' });
  await expect(store.remove(earlierId)).rejects.toMatchObject({ code: 'storage_unavailable' });

  await bucket.start();
  expect(await store.open(id)).toBeNull();
  const blob = (await store.open(earlierId))!;
  expect((await read(blob.stream(0, blob.size - 1))).equals(earlier)).toBe(true);
  // And it takes new blobs again.
  await store.put(id, Buffer.from('back'));
  expect((await read((await store.open(id))!.stream(0, 3))).toString()).toBe('back');
});

test('a range read with the bucket down ends its stream with storage_unavailable, not an empty success', async () => {
  const store = newStore();
  const id = key();
  await store.put(id, randomBytes(1024));
  const blob = (await store.open(id))!;
  await bucket.stop();
  try {
    await expect(read(blob.stream(0, blob.size - 1))).rejects.toMatchObject({ code: 'storage_unavailable' });
  } finally {
    await bucket.start();
  }
});
