import { LocalJobEventBus } from '../../src/infra/events/local-event-bus';
import { JobStream } from '../../src/graphql/job-stream';
import type { VideoJob } from '../../src/domain/video/video-job';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const job = (id: string, status: VideoJob['status'], second: number, accountId = 'acct_1') =>
  ({ id, accountId, status, updatedAt: at(second), createdAt: at(0) }) as VideoJob;

/** `bus.listeners` counts the subscriptions listening, to see that every stream lets go of the bus. */
let bus: LocalJobEventBus;
beforeEach(() => {
  bus = new LocalJobEventBus();
});

test('one job: the state read first, buffered events it covers dropped, then the end after a terminal state', async () => {
  const stream = new JobStream(bus, { accept: (j) => j.id === 'vid_1', maxBuffer: 10, singleJob: true });
  await bus.publish({ job: job('vid_1', 'PROCESSING', 1) }); // raced the read: already covered by it
  await bus.publish({ job: job('vid_2', 'PROCESSING', 1) }); // another job
  stream.startWith(job('vid_1', 'PROCESSING', 1));
  expect((await stream.next()).value.status).toBe('PROCESSING');
  const pending = stream.next();
  await bus.publish({ job: job('vid_1', 'COMPLETED', 2) });
  expect((await pending).value.status).toBe('COMPLETED');
  expect(bus.listeners).toBe(0); // nothing follows a terminal state
  expect(await stream.next()).toEqual({ value: undefined, done: true });
});

test('one job: a terminal event that raced the read still ends the stream, in order', async () => {
  const stream = new JobStream(bus, { accept: (j) => j.id === 'vid_1', maxBuffer: 10, singleJob: true });
  await bus.publish({ job: job('vid_1', 'FAILED', 3) });
  stream.startWith(job('vid_1', 'PROCESSING', 1));
  const seen = [];
  for await (const j of stream) seen.push(j.status);
  expect(seen).toEqual(['PROCESSING', 'FAILED']);
  expect(bus.listeners).toBe(0);
});

test('return() while a read waits ends it at once and unsubscribes', async () => {
  const stream = new JobStream(bus, { accept: () => true, maxBuffer: 10 });
  expect(bus.listeners).toBe(1);
  const pending = stream.next();
  await stream.return();
  expect(await pending).toEqual({ value: undefined, done: true });
  expect(bus.listeners).toBe(0);
  await bus.publish({ job: job('vid_1', 'PROCESSING', 1) });
  expect(await stream.next()).toEqual({ value: undefined, done: true });
});

test('a reader that falls too far behind gets an error, not an ever-growing buffer', async () => {
  const stream = new JobStream(bus, { accept: () => true, maxBuffer: 3 });
  for (let i = 0; i < 5; i++) await bus.publish({ job: job(`vid_${i}`, 'PROCESSING', i) });
  expect(bus.listeners).toBe(0);
  await expect(stream.next()).rejects.toMatchObject({ type: 'service_unavailable' });
  expect(await stream.next()).toEqual({ value: undefined, done: true });
});

test('an account stream passes only what it accepts, in order', async () => {
  const stream = new JobStream(bus, { accept: (j) => j.accountId === 'acct_1', maxBuffer: 10 });
  await bus.publish({ job: job('vid_1', 'PROCESSING', 1) });
  await bus.publish({ job: job('vid_2', 'PROCESSING', 1, 'acct_2') });
  await bus.publish({ job: job('vid_1', 'COMPLETED', 2) });
  expect((await stream.next()).value).toMatchObject({ id: 'vid_1', status: 'PROCESSING' });
  expect((await stream.next()).value).toMatchObject({ id: 'vid_1', status: 'COMPLETED' });
  await stream.return();
  expect(bus.listeners).toBe(0);
});

test('many jobs: after a reconnect, the changes re-read from the moment the bus went down (less a margin), each state once', async () => {
  let reconnect: (downSince: Date) => void = () => undefined;
  const reconnecting = Object.assign(bus, { onReconnect: (l: (downSince: Date) => void) => ((reconnect = l), () => undefined) });
  const asked: Date[] = [];
  const stream = new JobStream(reconnecting, {
    accept: (j) => j.accountId === 'acct_1',
    maxBuffer: 10,
    resyncChanged: async (since) => {
      asked.push(since);
      // What the bus brought before the gap, what it missed, a state older than one delivered, another account's.
      return [job('vid_1', 'PROCESSING', 1), job('vid_1', 'COMPLETED', 30), job('vid_2', 'PROCESSING', 31), job('vid_3', 'FAILED', 32, 'acct_2')];
    },
  });
  await bus.publish({ job: job('vid_1', 'PROCESSING', 1) });
  await bus.publish({ job: job('vid_2', 'COMPLETED', 40) });
  expect((await stream.next()).value).toMatchObject({ id: 'vid_1', status: 'PROCESSING' });
  expect((await stream.next()).value).toMatchObject({ id: 'vid_2', status: 'COMPLETED' });
  reconnect(at(25));
  expect((await stream.next()).value).toMatchObject({ id: 'vid_1', status: 'COMPLETED' });
  expect(asked).toEqual([at(15)]);
  const pending = stream.next();
  await bus.publish({ job: job('vid_4', 'PROCESSING', 50) });
  expect((await pending).value).toMatchObject({ id: 'vid_4' });
  await stream.return();
});
