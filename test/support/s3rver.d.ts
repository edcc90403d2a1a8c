/** The part of s3rver's API the tests use (the package ships no types). */
declare module '@20minutes/s3rver' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface S3rverOptions {
    /** Where objects are kept on disk. */
    directory: string;
    silent?: boolean;
    configureBuckets?: { name: string; configs: string[] }[];
  }

  export default class S3rver {
    constructor(options: S3rverOptions);
    /** Creates the configured buckets (kept if they exist). */
    configureBuckets(): Promise<void>;
    /** Koa's request handler. */
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    logger: { close(): void };
  }
}
