/**
 * A real S3-protocol server on a socket of its own (s3rver, objects in a scratch directory) with
 * one bucket, that a test stops and starts again: `stop()` cuts every connection and refuses new
 * ones (a bucket that went down), `start()` listens again on the same port over the same
 * directory (the bucket back, with what it held). `stopOn(match)` stops it when a request that
 * matches arrives, before the server reads it (down in the middle of an upload).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from '@20minutes/s3rver';

/** s3rver's built-in account. */
const ACCESS_KEY = 'S3RVER';

export interface S3Bucket {
  name: string;
  endpoint: string;
  /** The gateway's variables for this bucket. */
  env: Record<string, string>;
  /** Requests the server was sent (method and path, query included), in order. */
  readonly requests: readonly string[];
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server as a request `match`es (that request is cut, unread); resolves then. */
  stopOn(match: (req: IncomingMessage) => boolean): Promise<void>;
  readonly running: boolean;
  close(): Promise<void>;
}

export async function startS3Bucket(name = 'media'): Promise<S3Bucket> {
  const directory = mkdtempSync(join(tmpdir(), 's3-bucket-'));
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let trap: { match: (req: IncomingMessage) => boolean; sprung: () => void } | undefined;

  const stop = async () => {
    const s = server;
    if (!s) return;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  const start = async () => {
    if (server) return;
    // Its logger is left open: requests cut by a stop still finish inside it and log as they do.
    const app = new S3rver({ directory, silent: true, configureBuckets: [{ name, configs: [] }] });
    await app.configureBuckets();
    const handle = app.callback();
    const s = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      if (trap?.match(req)) {
        const { sprung } = trap;
        trap = undefined;
        void stop().then(sprung);
        return;
      }
      void handle(req, res);
    });
    s.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
    });
    port = (s.address() as { port: number }).port;
    server = s;
  };

  await start();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    name,
    endpoint,
    env: {
      MEDIA_STORE: 's3',
      S3_BUCKET: name,
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: ACCESS_KEY,
      AWS_SECRET_ACCESS_KEY: ACCESS_KEY,
    },
    requests,
    get running() {
      return server !== undefined;
    },
    stop,
    start,
    stopOn: (match) => {
      if (!server) return Promise.reject(new Error('the bucket is stopped already'));
      return new Promise<void>((resolve) => (trap = { match, sprung: resolve }));
    },
    async close() {
      trap = undefined;
      await stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
