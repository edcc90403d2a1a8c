import { PassThrough, pipeline, type Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { BlobHandle, BlobStore } from '../../domain/ports/blob-store';
import { storageUnavailable } from './storage-unavailable';

/** Where the bucket is and how to reach it (MEDIA_STORE=s3: config.ts). */
export interface S3Settings {
  bucket: string;
  region: string;
  /** An S3-compatible server's origin; unset, AWS's own endpoint for the region. */
  endpoint?: string;
  /** `https://endpoint/bucket/key` instead of `https://bucket.endpoint/key` (most servers other than AWS want it). */
  forcePathStyle: boolean;
  /** Static keys from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; unset, the SDK's chain (a role, a web identity, a profile). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

/** lib-storage's smallest part (S3's own minimum): a larger blob goes up in parts of this size, four at once. */
const PART_BYTES = 5 * 1024 * 1024;
const PARTS_AT_ONCE = 4;
/** A bucket that does not accept a connection this soon is down, not slow. */
const CONNECT_TIMEOUT_MS = 5_000;
/**
 * A socket this long without a byte either way is a hung bucket. It is also how long a download
 * may wait on a client that reads nothing (backpressure stops the socket), as long as a stream's
 * stall may last by default (STREAM_STALL_SECONDS).
 */
const IDLE_TIMEOUT_MS = 60_000;

/**
 * Media in an S3-compatible bucket, one object per blob under its key. Any instance reads what
 * any other stored. An object appears whole or not at all: a single PutObject, or a multipart
 * upload that is completed only after every part went up (a failed one is aborted, so a bucket
 * that went away mid-upload leaves no half object to serve). Any failure of the bucket (refused,
 * reset, timed out, a 5xx, a denial) is the store's, a 503 storage_unavailable, not the request's.
 */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;

  constructor(private readonly settings: S3Settings) {
    this.client = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      credentials: settings.credentials,
      // Checksums only where S3 requires them: the SDK's default (aws-chunked bodies with CRC
      // trailers) is refused by many S3-compatible servers, and a signed body is checked anyway.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, socketTimeout: IDLE_TIMEOUT_MS },
      // A refused or reset request is tried again, with a short backoff, before the call fails.
      maxAttempts: 3,
    });
  }

  async put(key: string, data: Buffer): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.settings.bucket, Key: key, Body: data, ContentLength: data.length },
      partSize: PART_BYTES,
      queueSize: PARTS_AT_ONCE,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      throw storageUnavailable(err);
    }
  }

  async open(key: string): Promise<BlobHandle | null> {
    let size: number;
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: key }));
      size = head.ContentLength ?? 0;
    } catch (err) {
      if (httpStatus(err) === 404) return null;
      throw storageUnavailable(err);
    }
    return { size, stream: (start, end) => this.range(key, start, end) };
  }

  async remove(key: string): Promise<void> {
    try {
      // S3 answers a delete of an absent key as a success.
      await this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: key }));
    } catch (err) {
      throw storageUnavailable(err);
    }
  }

  /** Closes the client's kept-alive sockets. */
  close(): void {
    this.client.destroy();
  }

  /**
   * Bytes `start`..`end` as a stream handed out at once, filled when the bucket answers. A reader
   * that goes away first cancels the request; one that goes away later ends the download (the
   * pipeline destroys the object's body, which gives its socket back).
   */
  private range(key: string, start: number, end: number): Readable {
    const out = new PassThrough();
    const cancel = new AbortController();
    out.once('close', () => cancel.abort());
    this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: key, Range: `bytes=${start}-${end}` }), { abortSignal: cancel.signal }).then(
      (got) => pipeline(got.Body as Readable, out, () => undefined),
      (err: unknown) => out.destroy(storageUnavailable(err)),
    );
    return out;
  }
}

function httpStatus(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}
