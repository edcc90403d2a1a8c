/** Where media bytes live: a disk directory here; an S3-compatible bucket can implement the same port. */
export interface BlobStore {
  put(key: string, data: Buffer): Promise<void>;
  get(key: string): Promise<Buffer | null>;
}
