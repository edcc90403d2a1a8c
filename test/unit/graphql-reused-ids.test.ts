import { ReusedIds, type MessageArgs } from '../../src/graphql/reused-ids';

/** A stand-in for graphql-ws: each subscribe's handler runs until the test ends it. */
function harness() {
  const delivered: string[] = [];
  const ends = new Map<string, () => void>();
  let open = true;
  const ids = new ReusedIds(
    (args: MessageArgs) => {
      const text = String(args[0]);
      delivered.push(text);
      const m = JSON.parse(text) as { id?: string; type: string };
      if (m.type !== 'subscribe') return Promise.resolve();
      return new Promise<void>((resolve) => ends.set(m.id!, resolve));
    },
    () => open,
  );
  const send = (m: object) => ids.push([Buffer.from(JSON.stringify(m)), false]);
  const end = async (id: string) => {
    ends.get(id)!();
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { delivered: () => delivered.map((t) => JSON.parse(t)), send, end, close: () => (open = false) };
}

const sub = (id: string, n = 0) => ({ id, type: 'subscribe', payload: { query: `subscription { videoJobsUpdated { id } } # ${n}` } });

test('a subscribe reusing a completed id waits for the old operation, and later messages wait behind it in order', async () => {
  const h = harness();
  h.send(sub('a', 1));
  h.send({ id: 'a', type: 'complete' });
  h.send(sub('a', 2));
  h.send({ type: 'ping' });
  h.send(sub('b'));
  expect(h.delivered().map((m) => `${m.type}:${m.id ?? ''}`)).toEqual(['subscribe:a', 'complete:a']);
  await h.end('a');
  expect(h.delivered().map((m) => `${m.type}:${m.id ?? ''}`)).toEqual(['subscribe:a', 'complete:a', 'subscribe:a', 'ping:', 'subscribe:b']);
  expect(h.delivered()[2].payload.query).toMatch(/# 2$/);
});

test('a subscribe reusing an id the client did not complete goes through at once (graphql-ws refuses it)', () => {
  const h = harness();
  h.send(sub('a', 1));
  h.send(sub('a', 2));
  expect(h.delivered()).toHaveLength(2);
});

test('a subscribe after its id ended, or with another id, is never held', async () => {
  const h = harness();
  h.send(sub('a', 1));
  h.send({ id: 'a', type: 'complete' });
  await h.end('a');
  h.send(sub('a', 2));
  h.send(sub('c'));
  expect(h.delivered()).toHaveLength(4);
});

test('held messages of a socket closed meanwhile are dropped', async () => {
  const h = harness();
  h.send(sub('a', 1));
  h.send({ id: 'a', type: 'complete' });
  h.send(sub('a', 2));
  h.close();
  await h.end('a');
  expect(h.delivered()).toHaveLength(2);
});

test('a chain of complete and subscribe with one id keeps holding each subscribe until the one before has ended', async () => {
  const h = harness();
  h.send(sub('a', 1));
  h.send({ id: 'a', type: 'complete' });
  h.send(sub('a', 2));
  h.send({ id: 'a', type: 'complete' });
  h.send(sub('a', 3));
  expect(h.delivered()).toHaveLength(2);
  await h.end('a');
  // The second subscribe ran and was completed; the third waits for the second's end.
  expect(h.delivered().map((m) => m.type)).toEqual(['subscribe', 'complete', 'subscribe', 'complete']);
  await h.end('a');
  expect(h.delivered().map((m) => m.payload?.query.slice(-1) ?? m.type)).toEqual(['1', 'complete', '2', 'complete', '3']);
});
