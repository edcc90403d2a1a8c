/**
 * The SSE writer on a real node:http server and a real client socket: events stream as they are
 * queued; held events (a stream's finished choices) wait for the next sent event and leave with it;
 * a hold is bounded; so is what one turn queues; a client that reads nothing is cut at the stall deadline.
 */
import { createServer, get, type Server, type ServerResponse } from 'node:http';
import { closeNow, listenLocal } from '../support/local-http';
import { pollUntil } from '../support/poll';
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

/** Waits until `check` holds (the client has read something). */
async function until(check: () => boolean): Promise<void> {
  await pollUntil(
    async () => check(),
    (done) => done,
    5_000,
    5,
  );
}

/**
 * Waits `n` event-loop turns, each with its poll for I/O: what the server wrote before them on
 * this loopback socket has been read by the client (both ends are this process's).
 */
async function turns(n = 1): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

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
  let markQueued!: () => void;
  const queued = new Promise<void>((r) => (markQueued = r));
  handler = async (res) => {
    startEventStream(res, {});
    writeEvent(res, { content: 'streamed' });
    await turns();
    holdEvents(res);
    writeEvent(res, { finish_reason: 'stop' });
    // Turns in which an event not held would have been written.
    await turns(2);
    markQueued();
    await finished;
    await sendEvent(res, { usage: 1 });
    await sendEvent(res, '[DONE]');
    endEventStream(res);
  };
  const client = openStream();
  await until(() => client.seen().includes('streamed'));
  await queued;
  await turns(3);
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
      await turns();
      if (held) holdEvents(res);
      writeEvent(res, { finish_reason: 'stop' });
      await turns();
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
    await turns();
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
      // A trickle: each chunk read, then a turn without reading.
      res.on('data', () => {
        res.pause();
        setImmediate(() => res.resume());
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
  // Two clients that read nothing: one stream with a stall deadline of 300 ms, one of an hour.
  // The first is cut while the second still waits: the deadline, not the full socket, cuts it.
  const stalls = [3_600_000, 300];
  const streams: Array<Promise<{ destroyed: boolean; listeners: number }>> = [];
  const waiting: ServerResponse[] = [];
  handler = async (res) => {
    const stallMs = stalls.shift()!;
    let settle!: (outcome: { destroyed: boolean; listeners: number }) => void;
    streams.push(new Promise((r) => (settle = r)));
    startEventStream(res, {}, stallMs);
    for (;;) {
      await new Promise((r) => setImmediate(r));
      const full = writeEvent(res, 'x'.repeat(64 * 1024));
      if (!full) continue;
      waiting.push(res);
      await full;
      if (!res.destroyed) continue;
      settle({ destroyed: res.destroyed, listeners: res.listenerCount('drain') });
      return;
    }
  };
  const requests = [get(origin, (res) => res.pause())];
  requests[0].on('error', () => undefined);
  await until(() => waiting.length > 0);
  requests.push(get(origin, (res) => res.pause()));
  requests[1].on('error', () => undefined);
  await until(() => streams.length === 2);
  const outcome = await streams[1];
  expect(outcome.destroyed).toBe(true);
  expect(outcome.listeners).toBe(0);
  const [patient] = waiting;
  expect(patient.destroyed).toBe(false);
  requests.forEach((r) => r.destroy());
  expect(await streams[0]).toEqual({ destroyed: true, listeners: 0 });
});
