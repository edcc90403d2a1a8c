import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimulatorVideoProvider } from '../../../src/providers/simulator';
import type { VideoJobSpec } from '../../../src/providers/ports';

const SUBMITTED = new Date('2025-01-01T00:00:00Z');

function spec(overrides: Partial<VideoJobSpec> = {}): VideoJobSpec {
  return {
    jobId: 'job_123',
    upstreamModel: 'sim-video',
    kind: 'video',
    prompt: 'a paper boat on a river',
    durationSeconds: 5,
    ...overrides,
  };
}

function providerAt(secondsAfterSubmit: number): SimulatorVideoProvider {
  return new SimulatorVideoProvider({ videoSeconds: 3, now: () => SUBMITTED.getTime() + secondsAfterSubmit * 1000 });
}

/** Top-level MP4 boxes: [type, size], checking that the sizes tile the file exactly. */
function topLevelBoxes(data: Buffer): [string, number][] {
  const boxes: [string, number][] = [];
  let offset = 0;
  while (offset < data.length) {
    const size = data.readUInt32BE(offset);
    expect(size).toBeGreaterThanOrEqual(8);
    boxes.push([data.toString('latin1', offset + 4, offset + 8), size]);
    offset += size;
  }
  expect(offset).toBe(data.length);
  return boxes;
}

const hasFfprobe = spawnSync('ffprobe', ['-version']).status === 0;

describe('SimulatorVideoProvider', () => {
  it('submits with a deterministic queue id and no state', async () => {
    const a = await providerAt(0).submit(spec());
    const b = await providerAt(0).submit(spec());
    expect(a.queueId).toMatch(/^sim_[0-9a-f]+$/);
    expect(a).toEqual(b);
    expect((await providerAt(0).submit(spec({ jobId: 'job_456' }))).queueId).not.toBe(a.queueId);
  });

  it('is processing until videoSeconds have passed', async () => {
    const { queueId } = await providerAt(0).submit(spec());
    expect(await providerAt(2.9).poll({ queueId, submittedAt: SUBMITTED, spec: spec() })).toEqual({ state: 'processing' });
  });

  it('completes with a real MP4 afterwards, deterministically', async () => {
    const { queueId } = await providerAt(0).submit(spec());
    const result = await providerAt(3).poll({ queueId, submittedAt: SUBMITTED, spec: spec() });
    if (result.state !== 'completed') throw new Error(`expected completed, got ${result.state}`);
    const { data, contentType } = result.video;
    expect(contentType).toBe('video/mp4');
    expect(data.toString('latin1', 4, 8)).toBe('ftyp');
    const types = topLevelBoxes(data).map(([type]) => type);
    expect(types).toEqual(expect.arrayContaining(['ftyp', 'moov', 'mdat']));
    expect(data.includes('avc1', 0, 'latin1')).toBe(true); // an H.264 sample entry
    // mvhd (version 0): flags(4) created(4) modified(4) timescale(4) duration(4).
    const mvhd = data.indexOf('mvhd', 0, 'latin1') + 4;
    const seconds = data.readUInt32BE(mvhd + 16) / data.readUInt32BE(mvhd + 12);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(2);
    // No wall-clock stamps (they would make two encodes of the same job differ).
    expect(data.readUInt32BE(mvhd + 4)).toBe(0);
    expect(data.readUInt32BE(mvhd + 8)).toBe(0);

    const again = await providerAt(60).poll({ queueId, submittedAt: SUBMITTED, spec: spec() });
    expect(again.state === 'completed' && again.video.data.equals(data)).toBe(true);
    const otherUrl = await providerAt(60).poll({ queueId, submittedAt: SUBMITTED, spec: spec({ imageUrl: 'https://example.com/a.png' }) });
    expect(otherUrl.state === 'completed' && otherUrl.video.data.equals(data)).toBe(false);
  });

  it('finishes with its first frame as a PNG thumbnail of the clip size', async () => {
    const result = await providerAt(3).poll({ queueId: 'q', submittedAt: SUBMITTED, spec: spec({ aspectRatio: '9:16' }) });
    if (result.state !== 'completed' || !result.thumbnail) throw new Error('expected a completed job with a thumbnail');
    expect(result.thumbnail.contentType).toBe('image/png');
    const png = result.thumbnail.data;
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([96, 160]);
  });

  it('reports the share of its time gone by as progress, 0 to 99, never before its submission', () => {
    const provider = providerAt(0);
    const at = (seconds: number) => provider.progressAt({ submittedAt: SUBMITTED }, SUBMITTED.getTime() + seconds * 1000);
    expect([at(-1), at(0), at(0.75), at(1.5), at(2.97), at(3), at(60)]).toEqual([0, 0, 25, 50, 99, 99, 99]);
  });

  it('encodes a second video on a warm provider', async () => {
    const provider = providerAt(10);
    await provider.poll({ queueId: 'q', submittedAt: SUBMITTED, spec: spec() });
    const again = await provider.poll({ queueId: 'q', submittedAt: SUBMITTED, spec: spec({ prompt: 'another', aspectRatio: '9:16' }) });
    expect(again.state).toBe('completed');
  });

  (hasFfprobe ? it : it.skip)('is a valid H.264 stream according to ffprobe', async () => {
    const result = await providerAt(3).poll({ queueId: 'q', submittedAt: SUBMITTED, spec: spec({ aspectRatio: '16:9' }) });
    if (result.state !== 'completed') throw new Error('expected completed');
    const dir = mkdtempSync(join(tmpdir(), 'sim-video-'));
    try {
      const file = join(dir, 'clip.mp4');
      writeFileSync(file, result.video.data);
      const probe = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name,width,height', '-of', 'json', file], {
        encoding: 'utf8',
      });
      expect(probe.status).toBe(0);
      const streams = JSON.parse(probe.stdout).streams as { codec_name: string; width: number; height: number }[];
      expect(streams[0]).toMatchObject({ codec_name: 'h264', width: 160, height: 96 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails [fail] jobs with a reason once the time has passed', async () => {
    const failing = spec({ prompt: 'please [FAIL] this' });
    expect(await providerAt(1).poll({ queueId: 'q', submittedAt: SUBMITTED, spec: failing })).toEqual({ state: 'processing' });
    expect(await providerAt(3).poll({ queueId: 'q', submittedAt: SUBMITTED, spec: failing })).toEqual({
      state: 'failed',
      reason: 'The simulator was asked to fail this job ([fail] in the prompt).',
    });
  });

  it('leaves no process-wide handlers behind from the wasm glue', async () => {
    const before = [process.listenerCount('uncaughtException'), process.listenerCount('unhandledRejection')];
    await providerAt(10).poll({ queueId: 'q', submittedAt: SUBMITTED, spec: spec({ prompt: 'handlers' }) });
    expect([process.listenerCount('uncaughtException'), process.listenerCount('unhandledRejection')]).toEqual(before);
  });
});
