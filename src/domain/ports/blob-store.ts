import type { Readable } from 'node:stream';

/** A stored blob opened for reading: its size, and a stream of any byte range of it. */
export interface BlobHandle {
  size: number;
  /** Bytes `start`..`end`, both included. */
  stream(start: number, end: number): Readable;
}

/** Where media bytes live: a disk directory here; an S3-compatible bucket can implement the same port. */
export interface BlobStore {
  put(key: string, data: Buffer): Promise<void>;
  /** Opens a blob for streaming (ranges, never the whole file in memory); null when absent. */
  open(key: string): Promise<BlobHandle | null>;
  /** Deletes a blob; one already absent is no error. */
  remove(key: string): Promise<void>;
}
