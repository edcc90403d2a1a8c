/**
 * A burst of socket reads spread over turns: once paused, sockets read nothing until their slice
 * comes, a slice per turn, and nothing they were sent is lost or reordered. Real TCP sockets.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { BurstReads } from '../../src/graphql/burst-reads';
import { pollUntil } from '../support/poll';

let server: Server;
let accepted: Socket[];
let clients: Socket[];

async function open(count: number, reads: BurstReads): Promise<void> {
  accepted = [];
  server = createServer((s) => {
    reads.track(s);
    accepted.push(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  clients = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((r) => {
          const c = connect(port, '127.0.0.1', () => r(c));
        }),
    ),
  );
  await pollUntil(
    async () => accepted.length,
    (n) => n >= count,
    10_000,
    5,
  );
}

afterEach(async () => {
  clients.forEach((c) => c.destroy());
  await new Promise((r) => server.close(r));
});

/** Waits `n` event-loop turns (each with its poll for I/O). */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

/** Counts event-loop turns (one per check phase) while it runs. */
function turnCounter() {
  let turn = 0;
  let on = true;
  const tick = () => {
    turn++;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  return { now: () => turn, stop: () => (on = false) };
}

test('paused sockets read nothing while the backlog is long, then a slice per turn, every byte in order', async () => {
  let backlog = 1_000;
  const reads = new BurstReads(10, () => backlog);
  await open(60, reads);
  const received = new Map<Socket, string>();
  const readsInTurn = new Map<number, number>();
  const counter = turnCounter();
  for (const s of accepted) {
    received.set(s, '');
    s.on('data', (chunk: Buffer) => {
      received.set(s, received.get(s)! + chunk.toString());
      readsInTurn.set(counter.now(), (readsInTurn.get(counter.now()) ?? 0) + 1);
    });
  }

  reads.pauseAll();
  expect(reads.pausedCount).toBe(60);
  clients.forEach((c, i) => c.write(`first ${i};`));
  await Promise.all(clients.map((c, i) => new Promise((r) => c.write(`second ${i};`, r))));
  // Written to the kernel (loopback: in the server sockets' buffers), and turns with their polls
  // for I/O gone by: nothing was read while messages were waiting.
  await turns(3);
  expect([...received.values()].every((text) => text === '')).toBe(true);

  backlog = 0;
  await pollUntil(
    async () => reads.pausedCount > 0 || [...received.values()].some((t) => !t.includes('second')),
    (waiting) => !waiting,
    5_000,
    10,
  );
  counter.stop();
  accepted.forEach((s, i) => expect(received.get(s)).toBe(`first ${i};second ${i};`));
  // A turn reads at most the slice it put back.
  expect(Math.max(...readsInTurn.values())).toBeLessThanOrEqual(10);
  expect(readsInTurn.size).toBeGreaterThanOrEqual(6);
});

test('a socket that closes while paused is seen closed once it reads again, and is not paused again', async () => {
  const reads = new BurstReads(5, () => 0);
  await open(12, reads);
  const closed: number[] = [];
  accepted.forEach((s, i) => {
    s.on('close', () => closed.push(i));
    s.resume();
  });
  reads.pauseAll();
  clients[3].end();
  await pollUntil(
    async () => closed.includes(3) && reads.pausedCount === 0,
    (noticed) => noticed,
    5_000,
    10,
  );
  expect(closed).toEqual([3]);
  // Pausing again finds no closed socket among the tracked ones.
  reads.pauseAll();
  expect(reads.pausedCount).toBe(11);
});
