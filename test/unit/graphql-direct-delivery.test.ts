/**
 * Subscription answers written straight to the socket: the frames are what graphql-ws would
 * have written, each shared answer is serialised once, the stream handed to graphql-ws settles
 * when the subscription ends, and a reader that falls behind ends its subscription with an error.
 */
import type { ExecutionResult, FormattedExecutionResult } from 'graphql';
import { GraphQLError } from 'graphql';
import { deliverDirectly, MAX_UNSENT_BYTES, type DeliveryTarget } from '../../src/graphql/direct-delivery';
import { DomainError } from '../../src/domain/errors/domain-error';

/** A source of events the test pushes, ended by `end()` or by the consumer's return(). */
function source<T>() {
  const queue: T[] = [];
  let waiting: ((r: IteratorResult<T>) => void) | null = null;
  let ended = false;
  let returned = 0;
  const it: AsyncIterator<T> = {
    next: () => {
      if (queue.length) return Promise.resolve({ value: queue.shift()!, done: false });
      if (ended) return Promise.resolve({ value: undefined, done: true });
      return new Promise((r) => (waiting = r));
    },
    return: async () => {
      returned++;
      ended = true;
      waiting?.({ value: undefined, done: true });
      waiting = null;
      return { value: undefined, done: true };
    },
  };
  return {
    it,
    push(v: T) {
      if (waiting) {
        const w = waiting;
        waiting = null;
        w({ value: v, done: false });
      } else queue.push(v);
    },
    end() {
      ended = true;
      waiting?.({ value: undefined, done: true });
    },
    get returned() {
      return returned;
    },
  };
}

function socket() {
  const sent: string[] = [];
  return { sent, readyState: 1, bufferedAmount: 0, send: (data: string) => void sent.push(data) };
}

const tick = () => new Promise((r) => setImmediate(r));
const formatErrors = (r: ExecutionResult): FormattedExecutionResult => ({
  ...r,
  errors: (r.errors ?? []).map((e) => ({ message: `formatted: ${e.message}` })),
});
const target = (id: string, s: ReturnType<typeof socket>): DeliveryTarget => ({ id, socket: s as unknown as DeliveryTarget['socket'], formatErrors });

test("each answer goes out as graphql-ws's own next frame, byte for byte; the stream settles when the source ends", async () => {
  const src = source<ExecutionResult>();
  const s = socket();
  const id = 'op "1" ü';
  const stream = deliverDirectly(src.it, (e) => e, target(id, s));
  const settled = stream.next();
  const answers: ExecutionResult[] = [
    { data: { videoJobsUpdated: { id: 'vid_1', status: 'PROCESSING', url: null } } },
    { data: { videoJobsUpdated: { id: 'vid_1', status: 'COMPLETED', url: 'https://x/ä.mp4' } } },
  ];
  for (const a of answers) src.push(a);
  await tick();
  expect(s.sent).toEqual(answers.map((payload) => JSON.stringify({ id, type: 'next', payload })));
  src.end();
  await expect(settled).resolves.toEqual({ value: undefined, done: true });
});

test('a shared answer is serialised once for every subscription that gets it', async () => {
  const shared: ExecutionResult = { data: { n: 1 } };
  let serialised = 0;
  Object.defineProperty(shared, 'data', { enumerable: true, get: () => (serialised++, { n: 1 }) });
  const sockets = Array.from({ length: 50 }, () => socket());
  const sources = sockets.map((s, i) => {
    const src = source<ExecutionResult>();
    void deliverDirectly(src.it, (e) => e, target(String(i), s)).next();
    return src;
  });
  for (const src of sources) src.push(shared);
  await tick();
  expect(sockets.map((s) => s.sent.length)).toEqual(sockets.map(() => 1));
  expect(sockets[49].sent[0]).toBe('{"id":"49","type":"next","payload":{"data":{"n":1}}}');
  expect(serialised).toBe(1);
});

test('an answer with errors is written with them formatted, as the onNext hook does', async () => {
  const src = source<ExecutionResult>();
  const s = socket();
  void deliverDirectly(src.it, (e) => e, target('a', s)).next();
  src.push({ data: null, errors: [new GraphQLError('boom')] });
  await tick();
  expect(JSON.parse(s.sent[0])).toEqual({ id: 'a', type: 'next', payload: { data: null, errors: [{ message: 'formatted: boom' }] } });
});

test('an answer still executing is awaited; events keep their order', async () => {
  const src = source<number>();
  const s = socket();
  // The first event's execution goes on until the test lets it finish.
  let finishFirst!: () => void;
  const first = new Promise<ExecutionResult>((r) => (finishFirst = () => r({ data: { n: 1 } })));
  void deliverDirectly(src.it, (n) => (n === 1 ? first : { data: { n } }), target('a', s)).next();
  src.push(1);
  src.push(2);
  await tick();
  // The second, executed at once, waits for the first.
  expect(s.sent).toEqual([]);
  finishFirst();
  await tick();
  expect(s.sent.map((f) => JSON.parse(f).payload.data.n)).toEqual([1, 2]);
});

test("graphql-ws's return() (client complete, socket closed) ends the source and settles the stream", async () => {
  const src = source<ExecutionResult>();
  const s = socket();
  const stream = deliverDirectly(src.it, (e) => e, target('a', s));
  const settled = stream.next();
  await stream.return(undefined);
  await expect(settled).resolves.toEqual({ value: undefined, done: true });
  expect(src.returned).toBeGreaterThanOrEqual(1);
  src.push({ data: {} });
  await tick();
  expect(s.sent).toEqual([]);
});

test('a socket no longer open ends the subscription quietly', async () => {
  const src = source<ExecutionResult>();
  const s = socket();
  const settled = deliverDirectly(src.it, (e) => e, target('a', s)).next();
  s.readyState = 3;
  src.push({ data: {} });
  await expect(settled).resolves.toEqual({ value: undefined, done: true });
  expect(s.sent).toEqual([]);
  expect(src.returned).toBe(1);
});

test('a reader that falls behind (unsent bytes past the bound) gets an error, and the source is released', async () => {
  const src = source<ExecutionResult>();
  const s = socket();
  const settled = deliverDirectly(src.it, (e) => e, target('a', s)).next();
  src.push({ data: { n: 1 } });
  await tick();
  s.bufferedAmount = MAX_UNSENT_BYTES + 1;
  src.push({ data: { n: 2 } });
  await expect(settled).rejects.toBeInstanceOf(DomainError);
  expect(s.sent).toHaveLength(1);
  expect(src.returned).toBe(1);
});

test('the bound on unsent bytes grows with the operations sharing the socket', async () => {
  const src = source<ExecutionResult>();
  const s = socket();
  const settled = deliverDirectly(src.it, (e) => e, { ...target('a', s), operationsOnSocket: () => 3 }).next();
  s.bufferedAmount = 2 * MAX_UNSENT_BYTES;
  src.push({ data: { n: 1 } });
  await tick();
  expect(s.sent).toHaveLength(1);
  s.bufferedAmount = 3 * MAX_UNSENT_BYTES + 1;
  src.push({ data: { n: 2 } });
  await expect(settled).rejects.toBeInstanceOf(DomainError);
  expect(s.sent).toHaveLength(1);
});
