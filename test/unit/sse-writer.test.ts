/**
 * The SSE writer on a real node:http server and a real client socket: events stream as they are
 * queued; held events (a stream's finished choices) wait for the next sent event and leave with it;
 * a hold is bounded; so is what one turn queues; a client that reads nothing is cut at the stall deadline.
 */
import { createServer, get, type Server, type ServerResponse } from 'node:http';
import { closeNow, listenLocal } from '../support/local-http';
import { endEventStream, holdEvents, sendEvent, startEventStream, writeEvent } from '../../src/rest/sse/sse-writer';

let server: Server;
let origin: string;
let handler: (res: ServerResponse) => Promise<void>;

beforeAll(async () => {
  server = createServer((_req, res) => void handler(res));
  origin = await listenLocal(server);
});
afterAll(() => closeNow(server));

/** Opens the stream and collects what arrives; `seen()` is everything received so far. */
function openStream(): { seen: () => string; ended: Promise<string> } {
  let text = '';
  const ended = new Promise<string>((resolve, reject) => {
    get(origin, (res) => {
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve(text));
    }).on('error', reject);
  });
  // A test that fails before reading the end must not also crash on the server's cut.
  ended.catch(() => undefined);
  return { seen: () => text, ended };
}

/** Waits until `check` holds (the client has read something), or fails after 2 s. */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the client');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('queued events reach the client without waiting for the end of the stream', async () => {
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  handler = async (res) => {
    startEventStream(res, {});
    writeEvent(res, { n: 1 });
    writeEvent(res, { n: 2 });
    await finished;
    await sendEvent(res, '[DONE]');
    endEventStream(res);
  };
  const client = openStream();
  await until(() => client.seen().includes('data: {"n":2}\n\n'));
  expect(client.seen()).not.toContain('[DONE]');
  finish();
  expect(await client.ended).toBe('data: {"n":1}\n\ndata: {"n":2}\n\ndata: [DONE]\n\n');
});

test('held events wait for the next sent event and leave with it, in order', async () => {
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  handler = async (res) => {
    startEventStream(res, {});
    writeEvent(res, { content: 'streamed' });
    await pause(20);
    holdEvents(res);
    writeEvent(res, { finish_reason: 'stop' });
    await finished;
    await sendEvent(res, { usage: 1 });
    await sendEvent(res, '[DONE]');
    endEventStream(res);
  };
  const client = openStream();
  await until(() => client.seen().includes('streamed'));
  await pause(50);
  // Written before the hold: on the wire. Queued after it: not yet.
  expect(client.seen()).toBe('data: {"content":"streamed"}\n\n');
  finish();
  expect(await client.ended).toBe('data: {"content":"streamed"}\n\ndata: {"finish_reason":"stop"}\n\ndata: {"usage":1}\n\ndata: [DONE]\n\n');
});

test('events queued at the end of a held stream leave with its end, in order, held or not', async () => {
  for (const held of [true, false]) {
    handler = async (res) => {
      startEventStream(res, {});
      writeEvent(res, { content: 'streamed' });
      await pause(20);
      if (held) holdEvents(res);
      writeEvent(res, { finish_reason: 'stop' });
      await pause(20);
      writeEvent(res, { usage: 1 });
      writeEvent(res, '[DONE]');
      endEventStream(res);
    };
    expect(await openStream().ended).toBe('data: {"content":"streamed"}\n\ndata: {"finish_reason":"stop"}\n\ndata: {"usage":1}\n\ndata: [DONE]\n\n');
  }
});

test('an error ends a held stream with what was held, then the error', async () => {
  handler = async (res) => {
    startEventStream(res, {});
    holdEvents(res);
    writeEvent(res, { finish_reason: 'stop' });
    await pause(20);
    await sendEvent(res, { error: { message: 'boom' } });
    endEventStream(res);
  };
  expect(await openStream().ended).toBe('data: {"finish_reason":"stop"}\n\ndata: {"error":{"message":"boom"}}\n\n');
});

test('a hold is bounded: past 64 KB held, events are written as they come', async () => {
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  handler = async (res) => {
    startEventStream(res, {});
    holdEvents(res);
    // An upstream that goes on after its finish: 80 KB of events with no end in sight.
    for (let i = 0; i < 80; i++) writeEvent(res, { filler: 'x'.repeat(1000), i });
    await finished;
    endEventStream(res);
  };
  const client = openStream();
  await until(() => client.seen().includes('"i":79}'));
  finish();
  const text = await client.ended;
  expect(text.match(/data: /g)).toHaveLength(80);
});

test('a slow reader makes the stream wait many times, and no wait leaves a listener behind', async () => {
  let listeners = -1;
  let waits = 0;
  const done = new Promise<void>((resolveDone) => {
    handler = async (res) => {
      startEventStream(res, {});
      const big = 'x'.repeat(256 * 1024);
      for (let i = 0; i < 80; i++) {
        // A turn between events, as between an upstream's reads: the queued event is written.
        await new Promise((r) => setImmediate(r));
        const full = writeEvent(res, big);
        if (full) {
          waits++;
          await full;
        }
      }
      listeners = res.listenerCount('close') + res.listenerCount('drain');
      endEventStream(res);
      resolveDone();
    };
  });
  // The client reads slowly: paused a while, then drained.
  await new Promise<void>((resolve, reject) => {
    get(origin, (res) => {
      // A trickle: each chunk read, then a pause.
      res.on('data', () => {
        res.pause();
        setTimeout(() => res.resume(), 2);
      });
      res.on('end', resolve);
    }).on('error', reject);
  });
  await done;
  expect(waits).toBeGreaterThanOrEqual(3);
  // node:http's own listeners only: no wait leaves a 'close' one behind.
  expect([waits, listeners]).toEqual([waits, 0]);
});

test('events queued in one turn past 64 KB are written at once, so a provider that never waits sees the socket fill', async () => {
  let firstWait = -1;
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  handler = async (res) => {
    startEventStream(res, {});
    // 64 MB in one turn, as a generator that never waits would queue it: far past any socket buffer.
    for (let i = 0; i < 64 * 1024; i++) {
      const full = writeEvent(res, 'x'.repeat(1024));
      if (full) {
        firstWait = i;
        break;
      }
    }
    await finished;
    res.destroy();
  };
  const request = get(origin, (res) => res.pause());
  request.on('error', () => undefined);
  await until(() => firstWait >= 0);
  // Waited after what the socket took, not after 64 MB held in a string.
  expect(firstWait).toBeLessThan(32 * 1024);
  finish();
  request.destroy();
});

test('a client that reads nothing past the stall deadline: the stream is cut, its wait settles and no listener stays', async () => {
  const cut = new Promise<{ waitedMs: number; destroyed: boolean; listeners: number }>((resolve) => {
    handler = async (res) => {
      startEventStream(res, {}, 300);
      for (;;) {
        await new Promise((r) => setImmediate(r));
        const full = writeEvent(res, 'x'.repeat(64 * 1024));
        if (!full) continue;
        const started = Date.now();
        await full;
        if (!res.destroyed) continue;
        resolve({ waitedMs: Date.now() - started, destroyed: res.destroyed, listeners: res.listenerCount('drain') });
        return;
      }
    };
  });
  const request = get(origin, (res) => res.pause());
  request.on('error', () => undefined);
  const outcome = await cut;
  expect(outcome.destroyed).toBe(true);
  expect(outcome.waitedMs).toBeGreaterThanOrEqual(250);
  expect(outcome.waitedMs).toBeLessThan(5_000);
  expect(outcome.listeners).toBe(0);
  request.destroy();
});
