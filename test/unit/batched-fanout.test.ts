import { BatchedFanout } from '../../src/infra/events/batched-fanout';

const turn = () => new Promise<void>((r) => setImmediate(r));
/** Event-loop turns until `done()` or a bound (each batch needs one turn). */
async function turnsUntil(done: () => boolean, bound = 1000): Promise<number> {
  let turns = 0;
  while (!done() && turns < bound) (await turn(), turns++);
  return turns;
}

test('one event reaches every listener, one batch per event-loop turn, with other callbacks between batches', async () => {
  const fanout = new BatchedFanout<number>({ batchSize: 100 });
  const seen: number[] = [];
  for (let i = 0; i < 1050; i++) fanout.subscribe(() => seen.push(i), 'account:a');
  fanout.publish(7, ['account:a']);
  // The first batch runs on the publisher's turn, and no more.
  expect(seen.length).toBe(100);
  let seenByAnotherCallback = -1;
  setImmediate(() => (seenByAnotherCallback = seen.length));
  await turnsUntil(() => seen.length === 1050);
  expect(seen).toEqual(Array.from({ length: 1050 }, (_, i) => i));
  expect(seenByAnotherCallback).toBeGreaterThan(0);
  expect(seenByAnotherCallback).toBeLessThan(1050);
});

test('events arrive in publish order at every listener, also when a second is published mid fan-out', async () => {
  const fanout = new BatchedFanout<string>({ batchSize: 7 });
  const got = Array.from({ length: 50 }, () => [] as string[]);
  got.forEach((list, i) => fanout.subscribe((e) => list.push(e), i % 2 ? 'account:a' : undefined));
  fanout.publish('first', ['account:a']);
  fanout.publish('second', ['account:a']);
  await turn();
  fanout.publish('third', ['account:a']);
  await turnsUntil(() => got.every((l) => l.length === 3));
  for (const list of got) expect(list).toEqual(['first', 'second', 'third']);
});

test('an event visits only its topics (and listeners of every event)', () => {
  const fanout = new BatchedFanout<string>({ batchSize: 100 });
  const calls: string[] = [];
  fanout.subscribe((e) => calls.push(`a:${e}`), 'account:a');
  fanout.subscribe((e) => calls.push(`b:${e}`), 'account:b');
  fanout.subscribe((e) => calls.push(`job:${e}`), 'job:1');
  fanout.subscribe((e) => calls.push(`all:${e}`));
  fanout.publish('x', ['account:a', 'job:1']);
  expect(calls.sort()).toEqual(['a:x', 'all:x', 'job:x']);
});

test('a listener that leaves during a fan-out is not called afterwards; the count follows', async () => {
  const fanout = new BatchedFanout<number>({ batchSize: 10 });
  const calls = new Array<number>(30).fill(0);
  const offs = calls.map((_, i) => fanout.subscribe(() => calls[i]++, 't'));
  expect(fanout.size).toBe(30);
  fanout.publish(1, ['t']);
  offs[25]();
  offs[25](); // twice is harmless
  await turnsUntil(() => calls[29] === 1);
  expect(calls[25]).toBe(0);
  expect(calls.filter((c) => c === 1)).toHaveLength(29);
  expect(fanout.size).toBe(29);
  offs.forEach((off) => off());
  expect(fanout.size).toBe(0);
});

test('the same function subscribed twice is two subscriptions; a throwing listener costs only its own call', () => {
  const errors: unknown[] = [];
  const fanout = new BatchedFanout<number>({ batchSize: 10, onListenerError: (e) => errors.push(e) });
  let n = 0;
  const count = () => n++;
  fanout.subscribe(count, 't');
  fanout.subscribe(() => {
    throw new Error('boom');
  }, 't');
  fanout.subscribe(count, 't');
  fanout.publish(1, ['t']);
  expect(n).toBe(2);
  expect(errors).toHaveLength(1);
});
