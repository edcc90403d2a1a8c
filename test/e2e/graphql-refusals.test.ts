import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import type { TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';

/**
 * Refusals before any work, alike over HTTP and WebSocket, each naming what the client wrote:
 * the per-connection operation cap counted in arrival order, the paging arguments of the lists,
 * and unstorable text named by the argument it fills (not the variable that carries it).
 */
let wsUrl: string;
let acct: TestAccount;
let key: { id: string; secret: string };
const clients: Client[] = [];
// Registered before the gateway's fixture, so it reads the gateway before it closes.
afterAll(async () => {
  // Every refusal here comes before any work: nothing charged, no job queued.
  expect(await gw.balance(acct)).toBe(100);
  const jobs = await gw.api('POST', '/graphql', { token: key.secret, body: { query: '{ videoJobs { edges { node { id } } } }' } });
  expect(jobs.body.data.videoJobs.edges).toEqual([]);
});
const gw = useTestGateway();
beforeAll(async () => {
  wsUrl = `${gw.url.replace(/^http/, 'ws')}/graphql`;
  acct = await gw.newAccount(100);
  key = await gw.newKey(acct);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.dispose()));
});

const http = (query: string, variables: Record<string, unknown> = {}, token = key.secret) => gw.api('POST', '/graphql', { token, body: { query, variables } });

function connect(token = key.secret): Client {
  const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { authorization: `Bearer ${token}` } });
  clients.push(client);
  return client;
}

/** The errors of one operation over the socket: an `error` message's, or those of its first result. */
function wsErrors(client: Client, query: string, variables: Record<string, unknown> = {}): Promise<any[]> {
  return new Promise((resolve) => {
    let errors: any[] = [];
    client.subscribe(
      { query, variables },
      {
        next: (r) => void (errors = [...(r.errors ?? [])]),
        error: (e) => resolve(e as any[]),
        complete: () => resolve(errors),
      },
    );
  });
}

/** A graphql-transport-ws socket driven message by message, so a burst of subscribes leaves in one write. */
class RawSocket {
  readonly received: any[] = [];
  private readonly waiters: Array<() => void> = [];

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.received.push(JSON.parse(String(data)));
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  static async open(token: string): Promise<RawSocket> {
    const ws = new WebSocket(wsUrl, 'graphql-transport-ws');
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const socket = new RawSocket(ws);
    socket.send({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } });
    await socket.waitFor((m) => m.type === 'connection_ack');
    return socket;
  }

  send(message: unknown): void {
    this.ws.send(JSON.stringify(message));
  }

  subscribe(id: string, query = 'subscription { videoJobsUpdated { id } }'): void {
    this.send({ id, type: 'subscribe', payload: { query } });
  }

  /** Resolves once `count` received messages match (looked at again on each message). */
  async waitFor(match: (m: any) => boolean, count = 1): Promise<any[]> {
    for (;;) {
      const found = this.received.filter(match);
      if (found.length >= count) return found;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private settles = 0;
  /**
   * Until a query sent now has its answer (a result, or its own refusal): operations are counted
   * and checked in the order they arrive, so whatever an earlier one was going to be told has
   * been told by then.
   */
  async settled(): Promise<void> {
    const id = `mark-${this.settles++}`;
    this.subscribe(id, '{ __typename }');
    await this.waitFor((m) => m.id === id && (m.type === 'complete' || m.type === 'error'));
  }

  errorsFor = (prefix: string) => this.received.filter((m) => m.type === 'error' && String(m.id).startsWith(prefix));

  close(): void {
    this.ws.close();
  }
}

describe('at most 20 operations per connection, counted in arrival order', () => {
  test.each([21, 25, 30])('%i subscribes at once: exactly N - 20 refused, the latest arrivals', async (n) => {
    const socket = await RawSocket.open(key.secret);
    for (let i = 0; i < n; i++) socket.subscribe(`s${i}`);
    const refused = await socket.waitFor((m) => m.type === 'error', n - 20);
    await socket.settled();
    expect(socket.errorsFor('s')).toHaveLength(n - 20);
    expect(refused.map((m) => m.id).sort()).toEqual(Array.from({ length: n - 20 }, (_, i) => `s${20 + i}`).sort());
    for (const m of refused) {
      expect(m.payload).toHaveLength(1);
      expect(m.payload[0].extensions).toEqual({ code: 'rate_limit_exceeded' });
      expect(m.payload[0].extensions.param).toBeUndefined();
      expect(m.payload[0].message).toMatch(/At most 20 operations/);
    }
    socket.close();
  });

  test('a refused operation holds no place; a completed one frees its place', async () => {
    const socket = await RawSocket.open(key.secret);
    for (let i = 0; i < 25; i++) socket.subscribe(`s${i}`);
    await socket.waitFor((m) => m.type === 'error', 5);
    await socket.settled();
    expect(socket.errorsFor('s')).toHaveLength(5);

    // 20 running: one more is refused, whatever it is.
    socket.subscribe('q1', '{ models { id } }');
    const [q1] = await socket.waitFor((m) => m.id === 'q1');
    expect(q1.type).toBe('error');
    expect(q1.payload[0].extensions.code).toBe('rate_limit_exceeded');

    // The client completes s0: its place goes to the next subscribe, which is accepted (no error)...
    socket.send({ id: 's0', type: 'complete' });
    socket.subscribe('s25');
    // ...and holds it: a query right after meets 20 running operations again.
    socket.subscribe('q2', '{ models { id } }');
    const [q2] = await socket.waitFor((m) => m.id === 'q2');
    expect(q2.type).toBe('error');
    expect(q2.payload[0].extensions.code).toBe('rate_limit_exceeded');
    await socket.settled();
    expect(socket.received.filter((m) => m.id === 's25')).toEqual([]);

    // The place s25 frees on complete lets a query run to its end.
    socket.send({ id: 's25', type: 'complete' });
    socket.subscribe('q3', '{ models { id } }');
    await socket.waitFor((m) => m.id === 'q3' && m.type === 'complete');
    const q3 = socket.received.filter((m) => m.id === 'q3');
    expect(q3.map((m) => m.type)).toEqual(['next', 'complete']);
    expect(q3[0].payload.data.models.length).toBeGreaterThan(0);
    // Refusals were of the operations over the cap only: 5 + q1 + q2 (and the queries that marked a settled moment).
    expect(socket.received.filter((m) => m.type === 'error' && !String(m.id).startsWith('mark-'))).toHaveLength(7);
    socket.close();
  });
});

describe('which operation of a document to run', () => {
  const two = 'subscription a { videoJobsUpdated { id } } subscription b { videoJobsUpdated { status } }';

  test('several operations and no operationName: a BAD_REQUEST saying to name one, not an internal error', async () => {
    const socket = await RawSocket.open(key.secret);
    try {
      socket.send({ id: 'two', type: 'subscribe', payload: { query: two } });
      socket.send({ id: 'ghost', type: 'subscribe', payload: { query: two, operationName: 'c' } });
      const [noName] = await socket.waitFor((m) => m.type === 'error' && m.id === 'two');
      expect(noName.payload).toEqual([
        expect.objectContaining({ message: expect.stringMatching(/operationName/), extensions: expect.objectContaining({ code: 'BAD_REQUEST' }) }),
      ]);
      const [unknown] = await socket.waitFor((m) => m.type === 'error' && m.id === 'ghost');
      expect(unknown.payload).toEqual([
        expect.objectContaining({ message: "The document has no operation named 'c'.", extensions: expect.objectContaining({ code: 'BAD_REQUEST' }) }),
      ]);
    } finally {
      socket.close();
    }
  });

  test('with operationName the named one runs', async () => {
    const socket = await RawSocket.open(key.secret);
    try {
      socket.send({ id: 'b', type: 'subscribe', payload: { query: two, operationName: 'b' } });
      await socket.settled();
      expect(socket.received.filter((m) => m.id === 'b' && m.type === 'error')).toEqual([]);
    } finally {
      socket.close();
    }
  });
});

describe('paging arguments: videoJobs checks first and after as ledgerEntries does', () => {
  const VIDEO_JOBS = 'query($first: Int, $after: String) { videoJobs(first: $first, after: $after) { edges { node { id } } } }';
  const LEDGER = 'query($first: Int, $after: String) { ledgerEntries(first: $first, after: $after) { nodes { id } } }';

  test.each([
    [{ first: 0 }, 'first', /Invalid 'first': must be at least 1$/],
    [{ first: -1 }, 'first', /Invalid 'first': must be at least 1$/],
    [{ first: 101 }, 'first', /Invalid 'first': must be at most 100$/],
    [{ after: 'x' }, 'after', /Invalid 'after': must be the cursor of/],
  ])('%j: invalid_request_error naming %s, over HTTP and WebSocket', async (variables, param, message) => {
    const res = await http(VIDEO_JOBS, variables);
    expect(res.body.data).toBeNull();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0].extensions).toEqual({ code: 'invalid_request_error', param });
    expect(res.body.errors[0].message).toMatch(message);

    // The same refusal as ledgerEntries gives the same arguments.
    const ledger = await http(LEDGER, variables, acct.idToken);
    expect(ledger.body.errors[0].extensions).toEqual(res.body.errors[0].extensions);
    expect(ledger.status).toBe(res.status);

    const overSocket = await wsErrors(connect(), VIDEO_JOBS, variables);
    expect(overSocket).toHaveLength(1);
    expect(overSocket[0].extensions).toEqual({ code: 'invalid_request_error', param });
    expect(overSocket[0].message).toBe(res.body.errors[0].message);
  });

  test('the bounds themselves are answered; a well-formed cursor that names no job of the account is refused, not read as the end of the list', async () => {
    for (const variables of [{ first: 1 }, { first: 100 }, {}]) {
      const res = await http(VIDEO_JOBS, variables);
      expect([variables, res.body.errors]).toEqual([variables, undefined]);
      expect(res.body.data.videoJobs.edges).toEqual([]);
    }
    // A stale or mistyped cursor, or another account's job id, is refused rather than looking like "no more jobs".
    const res = await http(VIDEO_JOBS, { after: 'vid_0123456789abcdefABCD' });
    expect(res.body.errors[0].extensions).toEqual({ code: 'invalid_request_error', param: 'after' });
    expect(res.body.errors[0].message).toMatch(/^Invalid 'after': it is not the cursor of a job of this account/);
  });

  test('webhookDeliveries names its argument, first, not an internal name', async () => {
    const query = 'query($keyId: ID!, $first: Int) { webhookDeliveries(keyId: $keyId, first: $first) { eventId } }';
    for (const first of [0, 501]) {
      const res = await http(query, { keyId: key.id, first }, acct.idToken);
      expect(res.body.errors[0].extensions).toEqual({ code: 'invalid_request_error', param: 'first' });
      expect(res.body.errors[0].message).toMatch(/^Invalid 'first'/);
      const overSocket = await wsErrors(connect(acct.idToken), query, { keyId: key.id, first });
      expect(overSocket[0].extensions).toEqual({ code: 'invalid_request_error', param: 'first' });
    }
    expect((await http(query, { keyId: key.id, first: 500 }, acct.idToken)).body.data.webhookDeliveries).toEqual([]);
  });

  test('an unknown or foreign key is named by the argument that carried it, keyId (REST names its path parameter id)', async () => {
    const unknown = 'svc_live_ZZSR2MI0SgRkHoeJ';
    const operations = [
      'query($keyId: ID!) { webhookDeliveries(keyId: $keyId) { eventId } }',
      'mutation($keyId: ID!) { setWebhook(keyId: $keyId, url: "https://example.com/hook") { url } }',
      'mutation($keyId: ID!) { regenerateWebhookSecret(keyId: $keyId) { url } }',
    ];
    for (const query of operations) {
      const res = await http(query, { keyId: unknown }, acct.idToken);
      expect([query, res.body.errors[0].extensions]).toEqual([query, { code: 'not_found_error', param: 'keyId', reason: 'key_not_found' }]);
    }
  });
});

describe('unstorable text in a variable names the argument it fills', () => {
  const MODEL = 'svc-2.5-preview-text-to-video';
  const BAD = { nul: 'a\u0000b', 'lone surrogate': 'a\uD83Db' };

  describe.each(Object.entries(BAD))('%s', (_name, bad) => {
    test.each([
      ['a scalar argument', 'query($a: String) { videoJobs(after: $a) { edges { node { id } } } }', { a: bad }, 'after'],
      [
        'idempotencyKey',
        'mutation($i: QueueVideoInput!, $k: String) { queueVideo(input: $i, idempotencyKey: $k) { id } }',
        { i: { model: MODEL, prompt: 'x' }, k: bad },
        'idempotencyKey',
      ],
      ['a field of an input variable', 'mutation($i: QueueVideoInput!) { queueVideo(input: $i) { id } }', { i: { model: bad, prompt: 'x' } }, 'input.model'],
      ['a variable inside an input literal', 'mutation($m: String!) { queueVideo(input: { model: $m, prompt: "x" }) { id } }', { m: bad }, 'input.model'],
      [
        'a list element',
        'mutation($i: QueueVideoInput!) { queueVideo(input: $i) { id } }',
        { i: { model: 'svc-2-7-reference-to-video', prompt: 'x', referenceImageUrls: ['https://example.com/a.png', `https://example.com/${bad}`] } },
        'input.referenceImageUrls[1]',
      ],
      [
        'a variable used twice: its first use',
        'query($a: String) { one: videoJobs(after: $a) { edges { cursor } } two: ledgerEntries(after: $a) { nodes { id } } }',
        { a: bad },
        'after',
      ],
      // Names the client wrote are named as written, underscores and all.
      ['a variable the document never passes', 'query($a: String) { videoJobs(after: $a) { edges { cursor } } }', { my_var: bad }, 'my_var'],
      [
        'a key inside a variable the document never passes',
        'query($a: String) { videoJobs(after: $a) { edges { cursor } } }',
        { my_var: { snake_key: bad } },
        'my_var.snake_key',
      ],
    ])('%s: over HTTP and WebSocket', async (_label, query, variables, param) => {
      const res = await http(query, variables);
      expect(res.status).toBe(400);
      expect(res.body.errors).toHaveLength(1);
      expect(res.body.errors[0].extensions).toEqual({ code: 'invalid_request_error', param });
      expect(res.body.errors[0].message).toBe(`Invalid '${param}': text must not contain NUL characters or unpaired UTF-16 surrogates.`);
      const overSocket = await wsErrors(connect(), query, variables);
      expect(overSocket).toHaveLength(1);
      expect(overSocket[0].extensions).toEqual({ code: 'invalid_request_error', param });
      expect(overSocket[0].message).toBe(res.body.errors[0].message);
    });
  });

  test("a variable's key '__proto__' is refused, named as written", async () => {
    const res = await gw.api('POST', '/graphql', {
      token: key.secret,
      rawBody: '{"query":"query($a: String) { videoJobs(after: $a) { edges { cursor } } }","variables":{"extra":{"__proto__":{"x":1}}}}',
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toEqual({ code: 'invalid_request_error', param: 'extra.__proto__' });
    expect(res.body.errors[0].message).toBe("Field name '__proto__' is not accepted.");
  });

  // A lone surrogate cannot be written in a GraphQL string (a parse error); NUL can, as \u0000.
  test('written inline, the same argument path is named', async () => {
    const literal = JSON.stringify(BAD.nul);
    const res = await http(`mutation { queueVideo(input: { model: ${literal}, prompt: "x" }) { id } }`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toEqual({ code: 'invalid_request_error', param: 'input.model' });
    const scalar = await http(`{ videoJobs(after: ${literal}) { edges { cursor } } }`);
    expect(scalar.body.errors[0].extensions).toEqual({ code: 'invalid_request_error', param: 'after' });
  });
});
