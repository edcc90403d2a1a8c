/**
 * Encodes small H.264 MP4s with h264-mp4-encoder (WebAssembly; no system ffmpeg needed), on a
 * worker thread: an encode holds its thread for 40–80 ms, which on the main thread stalled every
 * request (and /healthz) while a test key's video finished. Frames are painted here (a few
 * hundred thousand pixels, about a millisecond) and handed over in one transferred buffer.
 *
 * One worker, started on the first video and kept (unref'd: it never holds the process open);
 * encodes queue on it in order. The package compiles its wasm when first required (~20 ms) and
 * its Emscripten glue installs process-wide crash handlers: both now stay inside the worker.
 * A worker that dies (a wasm abort) fails the encodes it had and is replaced on the next one.
 */
import { Worker } from 'node:worker_threads';
import { clearMp4Timestamps } from './mp4-timestamps';

export interface Mp4Options {
  /** Both even (H.264 4:2:0); multiples of 16 avoid padding. */
  width: number;
  height: number;
  frameRate: number;
  frameCount: number;
  /** Fills `rgba` (width*height*4 bytes, alpha ignored) with frame `index`. */
  paintFrame: (index: number, rgba: Uint8Array) => void;
}

/** Plain CommonJS, run with `eval` so it works the same from the compiled build and from the sources under Vitest. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const hme = require(workerData.encoderPath);
let counter = 0;
parentPort.on('message', async (job) => {
  let encoder;
  try {
    encoder = await hme.createH264MP4Encoder();
    encoder.outputFilename = 'simulator-' + (++counter) + '.mp4';
    encoder.width = job.width;
    encoder.height = job.height;
    encoder.frameRate = job.frameRate;
    encoder.speed = 10;
    encoder.quantizationParameter = 30;
    encoder.groupOfPictures = job.frameRate;
    encoder.initialize();
    const frames = new Uint8Array(job.frames);
    const size = job.width * job.height * 4;
    for (let i = 0; i < job.frameCount; i++) encoder.addFrameRgba(frames.subarray(i * size, (i + 1) * size));
    encoder.finalize();
    const bytes = encoder.FS.readFile(encoder.outputFilename);
    encoder.FS.unlink(encoder.outputFilename);
    const out = bytes.slice().buffer;
    parentPort.postMessage({ id: job.id, bytes: out }, [out]);
  } catch (err) {
    parentPort.postMessage({ id: job.id, error: String(err && err.message || err) });
  } finally {
    try { if (encoder) encoder.delete(); } catch {}
  }
});
`;

interface Pending {
  resolve: (bytes: Buffer) => void;
  reject: (err: Error) => void;
}

let worker: Worker | undefined;
const pending = new Map<number, Pending>();
let nextId = 0;

function encoderThread(): Worker {
  if (worker) return worker;
  const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { encoderPath: require.resolve('h264-mp4-encoder') } });
  w.unref();
  w.on('message', (m: { id: number; bytes?: ArrayBuffer; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (pending.size === 0) w.unref();
    if (!p) return;
    if (m.bytes) p.resolve(Buffer.from(m.bytes));
    else p.reject(new Error(m.error ?? 'the encoder failed'));
  });
  const fail = (err: Error) => {
    if (worker === w) worker = undefined;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  w.on('error', fail);
  w.on('exit', (code) => fail(new Error(`the encoder thread exited (${code})`)));
  worker = w;
  return w;
}

export async function encodeMp4(options: Mp4Options): Promise<Buffer> {
  const size = options.width * options.height * 4;
  const frames = new Uint8Array(size * options.frameCount);
  for (let i = 0; i < options.frameCount; i++) options.paintFrame(i, frames.subarray(i * size, (i + 1) * size));
  const id = ++nextId;
  const bytes = await new Promise<Buffer>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    const { width, height, frameRate, frameCount } = options;
    const thread = encoderThread();
    // Held while it has work: an encode in progress keeps the process alive, an idle thread does not.
    thread.ref();
    thread.postMessage({ id, width, height, frameRate, frameCount, frames: frames.buffer }, [frames.buffer]);
  });
  clearMp4Timestamps(bytes);
  return bytes;
}
