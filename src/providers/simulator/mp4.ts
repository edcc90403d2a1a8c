/**
 * Encodes small H.264 MP4s with h264-mp4-encoder (WebAssembly; no system ffmpeg needed).
 *
 * The package compiles its wasm when it is first required (~20 ms), so it is required lazily,
 * on the first video, and then reused: Node's module cache keeps one instance per process.
 *
 * Its Emscripten glue also installs two process-wide handlers when loaded: one that rethrows
 * every uncaught exception and one that turns any unhandled promise rejection into a wasm
 * abort. Those would override the gateway's own crash handling (and an abort would leave the
 * encoder dead), so they are removed right after loading; the encoder does not need them.
 */
import type { H264MP4Encoder } from 'h264-mp4-encoder';
import { clearMp4Timestamps } from './mp4-timestamps';

type EncoderModule = typeof import('h264-mp4-encoder');

const MODULE_ID = 'h264-mp4-encoder';

let encoderModule: EncoderModule | undefined;
/** Each encode writes its own file in the wasm FS, which all encoders share. */
let fileCounter = 0;

function snapshotListeners(): { uncaught: Set<unknown>; rejection: Set<unknown> } {
  return {
    uncaught: new Set(process.listeners('uncaughtException')),
    rejection: new Set(process.listeners('unhandledRejection')),
  };
}

function loadEncoderModule(): EncoderModule {
  if (encoderModule !== undefined) return encoderModule;
  const before = snapshotListeners();
  try {
    // A plain require (not import()) so this works the same under ts-jest and compiled CommonJS.
    encoderModule = require(MODULE_ID) as EncoderModule;
  } finally {
    for (const listener of process.listeners('uncaughtException')) {
      if (!before.uncaught.has(listener)) process.removeListener('uncaughtException', listener);
    }
    for (const listener of process.listeners('unhandledRejection')) {
      if (!before.rejection.has(listener)) process.removeListener('unhandledRejection', listener);
    }
  }
  return encoderModule;
}

/**
 * After a wasm abort the instance is unusable for good; forget it so the next video loads a
 * fresh one instead of failing forever.
 */
function discardEncoderModule(): void {
  encoderModule = undefined;
  try {
    delete require.cache[require.resolve(MODULE_ID)];
  } catch {
    // Nothing cached (or no require.cache, e.g. under a bundler): nothing to forget.
  }
}

export interface Mp4Options {
  /** Both even (H.264 4:2:0); multiples of 16 avoid padding. */
  width: number;
  height: number;
  frameRate: number;
  frameCount: number;
  /** Fills `rgba` (width*height*4 bytes, alpha ignored) with frame `index`. */
  paintFrame: (index: number, rgba: Uint8Array) => void;
}

export async function encodeMp4(options: Mp4Options): Promise<Buffer> {
  const hme = loadEncoderModule();
  let encoder: H264MP4Encoder | undefined;
  try {
    encoder = await hme.createH264MP4Encoder();
    // From here to the end everything is synchronous, so no other encode can interleave in
    // the shared file system; the unique name is a second guard.
    encoder.outputFilename = `simulator-${process.pid}-${++fileCounter}.mp4`;
    encoder.width = options.width;
    encoder.height = options.height;
    encoder.frameRate = options.frameRate;
    encoder.speed = 10; // fastest
    encoder.quantizationParameter = 30;
    encoder.groupOfPictures = options.frameRate;
    encoder.initialize();
    const frame = new Uint8Array(options.width * options.height * 4);
    for (let i = 0; i < options.frameCount; i++) {
      options.paintFrame(i, frame);
      encoder.addFrameRgba(frame);
    }
    encoder.finalize();
    const bytes = Buffer.from(encoder.FS.readFile(encoder.outputFilename));
    encoder.FS.unlink(encoder.outputFilename);
    clearMp4Timestamps(bytes);
    return bytes;
  } catch (error) {
    discardEncoderModule();
    throw error;
  } finally {
    try {
      encoder?.delete();
    } catch {
      // Deleting after an abort can throw too; the module is being discarded anyway.
    }
  }
}
