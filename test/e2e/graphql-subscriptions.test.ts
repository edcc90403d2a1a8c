import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { decodeJwt } from 'jose';
import type { TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';

/** graphql-transport-ws against the running server: jobs watched from queueing to their end. */
const gw = useTestGateway({ SIMULATOR_VIDEO_SECONDS: '1' });
let wsUrl: string;
const clients: Client[] = [];
beforeAll(async () => {
  wsUrl = `${gw.url.replace(/^http/, 'ws')}/graphql`;
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.dispose()));
});

const TEXT_MODEL = 'svc-2.5-preview-text-to-video';
const JOB_FIELDS = 'id status url reason creditsCharged creditsUsed updatedAt';

function connect(token?: string, on?: { closed?: (e: unknown) => void; connected?: () => void }): Client {
  const client = createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    on,
  });
  clients.push(client);
  return client;
}

interface Outcome {
  results: any[];
  error?: any;
  completed: boolean;
}

/** Runs one operation to its end (complete or error), collecting every result. */
function run(client: Client, query: string, variables?: Record<string, unknown>, onResult?: (r: any) => void): Promise<Outcome> {
  return new Promise((resolve) => {
    const out: Outcome = { results: [], completed: false };
    client.subscribe(
      { query, variables },
      {
        next: (r) => {
          out.results.push(r);
          onResult?.(r);
        },
        error: (e) => resolve({ ...out, error: e }),
        complete: () => resolve({ ...out, completed: true }),
      },
    );
  });
}

async function queue(client: Client, prompt: string): Promise<any> {
  const q = `mutation($input: QueueVideoInput!) { queueVideo(input: $input) { ${JOB_FIELDS} } }`;
  const out = await run(client, q, { input: { model: TEXT_MODEL, prompt, resolution: '480p' } });
  expect(out.results[0].errors).toBeUndefined();
  return out.results[0].data.queueVideo;
}

const watch = (client: Client, id: string, onResult?: (r: any) => void) =>
  run(client, `subscription($id: ID!) { videoJobUpdated(id: $id) { ${JOB_FIELDS} } }`, { id }, onResult);

let acct: TestAccount;
let key: { id: string; secret: string };
// Video requests are rate limited per key (5 a minute): each test gets an account and key of its own.
beforeEach(async () => {
  acct = await gw.newAccount(1000);
  key = await gw.newKey(acct);
});

test('a job queued by mutation is watched to COMPLETED, then the subscription completes', async () => {
  const client = connect(key.secret);
  const job = await queue(client, 'a lighthouse at dusk');
  expect(job.status).toBe('PROCESSING');
  const out = await watch(client, job.id);
  expect(out.completed).toBe(true);
  const states = out.results.map((r) => r.data.videoJobUpdated);
  expect(states.map((s) => s.status)).toEqual(['PROCESSING', 'COMPLETED']);
  const done = states[1];
  expect(done.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
  expect(done.creditsUsed).toBe(job.creditsCharged);
  const video = await fetch(done.url);
  expect(video.status).toBe(200);
  expect(video.headers.get('content-type')).toBe('video/mp4');
});

test('a failed job is seen FAILED with its reason, and refunded', async () => {
  const client = connect(key.secret);
  const before = await gw.balance(acct);
  const job = await queue(client, 'this one will [fail]');
  const out = await watch(client, job.id);
  expect(out.completed).toBe(true);
  const last = out.results.at(-1).data.videoJobUpdated;
  expect(last.status).toBe('FAILED');
  expect(last.reason).toEqual(expect.any(String));
  expect(last.url).toBeNull();
  expect(await gw.balance(acct)).toBe(before);
});

test('a finished job answers its final state at once and completes', async () => {
  const client = connect(key.secret);
  const job = await queue(client, 'quick');
  await watch(client, job.id);
  const again = await watch(client, job.id);
  expect(again.results.map((r) => r.data.videoJobUpdated.status)).toEqual(['COMPLETED']);
  expect(again.completed).toBe(true);
});

test("videoJobsUpdated carries every change to the account's jobs, and only those", async () => {
  const idTokenClient = connect(acct.idToken);
  const seen: any[] = [];
  const waiters: Array<() => void> = [];
  const watcher = run(idTokenClient, `subscription { videoJobsUpdated { ${JOB_FIELDS} } }`, undefined, (r) => {
    seen.push(r.data.videoJobsUpdated);
    waiters.forEach((w) => w());
  });
  const until = (ok: () => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => ok() && resolve();
      waiters.push(check);
      check();
    });
  const client = connect(key.secret);
  // The subscription is live once it sees a probe job; nothing is sent until then.
  const probe = await queue(client, 'probe');
  await until(() => seen.some((j) => j.id === probe.id && j.status === 'COMPLETED'));

  const stranger = await gw.newAccount(100);
  const theirs = await queue(connect((await gw.newKey(stranger)).secret), 'not yours');
  const a = await queue(client, 'first');
  const b = await queue(client, 'second [fail]');
  await until(() => [a.id, b.id].every((id) => seen.some((j) => j.id === id && j.status !== 'PROCESSING')));
  expect(seen.map((j) => j.id)).not.toContain(theirs.id);
  expect(seen.filter((j) => j.id === a.id).map((j) => j.status)).toEqual(['PROCESSING', 'COMPLETED']);
  expect(seen.filter((j) => j.id === b.id).map((j) => j.status)).toEqual(['PROCESSING', 'FAILED']);
  await idTokenClient.dispose();
  await watcher;
});

test("another account's job id answers not_found_error", async () => {
  const job = await queue(connect(key.secret), 'mine');
  const stranger = connect((await gw.newKey(await gw.newAccount())).secret);
  const out = await watch(stranger, job.id);
  const errors = out.results[0]?.errors ?? out.error;
  expect(errors[0].extensions).toMatchObject({ code: 'not_found_error', param: 'id' });
  expect(out.results.every((r) => !r.data?.videoJobUpdated)).toBe(true);
});

// The close says why, so a client can tell "renew the token" from "send it right" from "stop",
// which a bare "Forbidden" would not.
test.each([
  ['no credential', undefined, /^Forbidden: connection_init needs an authorization of the form "Bearer/],
  ['a revoked-looking key', 'svc_live_doesnotexist_0123456789', /^Forbidden: Invalid API key/],
  ['a bad ID token', 'eyJhbGciOiJFUzI1NiJ9.e30.c2ln', /^Forbidden: .*token/i],
])('%s: the socket is closed before any operation runs, with 4403 and the reason in words', async (_name, token, reason) => {
  let closed: { code: number; reason: string } | undefined;
  const client = connect(token, { closed: (e) => (closed = e as { code: number; reason: string }) });
  const out = await run(client, 'subscription { videoJobsUpdated { id } }');
  expect(out.results).toEqual([]);
  expect(out.completed).toBe(false);
  expect(closed?.code).toBe(4403);
  expect(closed?.reason).toMatch(reason);
  expect(Buffer.byteLength(closed!.reason)).toBeLessThanOrEqual(123);
});

test('a key revoked after connecting can start no new operation: its socket is closed', async () => {
  const k = await gw.newKey(acct);
  const client = connect(k.secret);
  // An open subscription keeps the (lazy) client on the same socket.
  const holding = run(client, 'subscription { videoJobsUpdated { id } }');
  expect((await run(client, '{ models { id } }')).results[0].data.models.length).toBeGreaterThan(0);
  await gw.api('DELETE', `/account/api-keys/${k.id}`, { token: acct.idToken });
  const held = await holding;
  expect(held.completed).toBe(false);
  expect(held.error?.code).toBe(4403);
  // The client reconnects for a new operation, and the revoked key is refused at connect.
  const out = await run(client, 'subscription { videoJobsUpdated { id } }');
  expect(out.results).toEqual([]);
  expect(out.error?.code).toBe(4403);
  await client.dispose();
});

test('a socket opened with an ID token is closed when the token expires, ending its subscriptions', async () => {
  const nowSeconds = Math.floor(Date.now() / 1000);
  // Expired 27 s ago: still within verification's 30 s of clock leeway, so the socket opens, for 2 to 3 s.
  const lapsing = await gw.gateway.devIdentity!.issue(`lapsing-${nowSeconds}`, { expiresIn: nowSeconds - 27 });
  const lasting = await gw.gateway.devIdentity!.issue(`lasting-${nowSeconds}`, { expiresIn: '1h' });
  // Usable until its expiry plus the 30 s leeway: the socket must live until then, and no longer.
  const usableUntil = (decodeJwt(lapsing).exp! + 30) * 1000;
  let acknowledged = false;
  const [short, long] = [connect(lapsing, { connected: () => (acknowledged = true) }), connect(lasting)];
  const ending = run(short, 'subscription { videoJobsUpdated { id } }');
  let stayingEnded = false;
  void run(long, 'subscription { videoJobsUpdated { id } }').then(() => (stayingEnded = true));
  const ended = await ending;
  const closedAt = Date.now();
  // Opened (not refused at connect), then closed with 4403 at the expiry, not before it.
  expect(acknowledged).toBe(true);
  expect(ended.completed).toBe(false);
  expect(ended.error?.code).toBe(4403);
  expect(closedAt).toBeGreaterThanOrEqual(usableUntil);
  // A token with time left keeps its socket and its subscription: still running when the other closed.
  expect(stayingEnded).toBe(false);
  await Promise.all([long.dispose(), short.dispose()]);
});

test('limits hold over the socket: depth, and 20 operations per connection', async () => {
  const client = connect(key.secret);
  const deep = await run(client, `{ ${'models { '.repeat(12)}id${' }'.repeat(12)} }`);
  expect(deep.error[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  expect(deep.error.map((e: any) => e.message).join()).toMatch(/levels deep/);

  // Messages are registered in the order they arrive, so the 21st meets 20 running ones.
  const open = Array.from({ length: 20 }, () => run(client, 'subscription { videoJobsUpdated { id } }'));
  const extra = await run(client, 'subscription { videoJobsUpdated { id } }');
  expect(extra.error[0].extensions.code).toBe('rate_limit_exceeded');
  await client.dispose();
  await Promise.all(open);
});

test('errors over the socket hide internals like HTTP does', async () => {
  const client = connect(key.secret);
  const out = await run(client, `mutation { queueVideo(input: { model: "${TEXT_MODEL}", prompt: "x", resolution: "4k" }) { id } }`);
  expect(out.results[0].errors[0]).toEqual({
    message: expect.stringContaining('resolution'),
    locations: expect.any(Array),
    path: ['queueVideo'],
    extensions: { code: 'invalid_request_error', param: 'resolution' },
  });
});

describe('a key revoked while its sockets are open', () => {
  test('its subscriptions end (close 4403); a socket of another key keeps running', async () => {
    const acct = await gw.newAccount(10);
    const doomed = await gw.newKey(acct, { name: 'doomed' });
    const kept = await gw.newKey(acct, { name: 'kept' });
    const closes: { key: string; code: number }[] = [];
    /** A subscription, registered once a query sent after it on the same socket has been answered (a socket's messages are handled in order). */
    const subscribe = async (key: { secret: string }, name: string) => {
      const client = connect(key.secret, { closed: (e) => closes.push({ key: name, code: (e as { code: number }).code }) });
      const running = run(client, `subscription { videoJobsUpdated { id } }`);
      await run(client, '{ models { id } }');
      return { running };
    };
    const doomedRun = (await subscribe(doomed, 'doomed')).running;
    await subscribe(kept, 'kept');
    expect((await gw.api('DELETE', `/account/api-keys/${doomed.id}`, { token: acct.idToken })).status).toBeLessThan(300);
    const outcome = await doomedRun;
    expect(outcome.completed).toBe(false);
    expect(closes).toEqual([{ key: 'doomed', code: 4403 }]);
  });
});
