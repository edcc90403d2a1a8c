import WebSocket from 'ws';
import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';

/**
 * A client that completes an operation and subscribes again with the same id at once (both
 * frames in one TCP segment, so the server reads them in one turn): the new subscription must
 * be the one that runs. graphql-ws on its own ended the old operation after the new one had
 * registered under the id, deleted the new one's entry and told the client `complete`.
 */
const gw = useTestGateway({ SIMULATOR_VIDEO_SECONDS: '30' });

/** Waits until `seen` holds, failing the test if it does not within `ms`. */
async function waitFor(seen: () => boolean, ms = 5000): Promise<void> {
  expect(
    await pollUntil(
      async () => seen(),
      (v) => v,
      ms,
      10,
    ),
  ).toBe(true);
}

const SUBSCRIPTION = 'subscription { videoJobsUpdated { id status } }';

interface Frame {
  id?: string;
  type: string;
  payload?: any;
}

/** A raw graphql-transport-ws connection, acknowledged, that records every frame it receives. */
async function open(token: string): Promise<{ ws: WebSocket; frames: Frame[]; sendTogether: (...messages: Frame[]) => void }> {
  const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
  const frames: Frame[] = [];
  ws.on('message', (data) => frames.push(JSON.parse(String(data)) as Frame));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } }));
  await waitFor(() => frames.some((f) => f.type === 'connection_ack'));
  const socket = (ws as unknown as { _socket: import('node:net').Socket })._socket;
  const sendTogether = (...messages: Frame[]) => {
    socket.cork();
    for (const m of messages) ws.send(JSON.stringify(m));
    socket.uncork();
  };
  return { ws, frames, sendTogether };
}

async function queueVideo(token: string, prompt: string): Promise<string> {
  const query = 'mutation($input: QueueVideoInput!) { queueVideo(input: $input) { id } }';
  const input = { model: 'svc-2.5-preview-text-to-video', prompt, resolution: '480p' };
  const res = await gw.api('POST', '/graphql', { token, body: { query, variables: { input } } });
  expect(res.body.errors).toBeUndefined();
  return res.body.data.queueVideo.id as string;
}

const nextsFor = (frames: Frame[], id: string, jobId: string) =>
  frames.filter((f) => f.id === id && f.type === 'next' && f.payload?.data?.videoJobsUpdated?.id === jobId);

test('complete then subscribe with the same id in one read: the new subscription runs, and a later complete ends it', async () => {
  const acct = await gw.newAccount(1000);
  for (let round = 0; round < 5; round++) {
    // Four videos a round; video requests are limited to 5 a minute per key.
    const key = await gw.newKey(acct);
    const { ws, frames, sendTogether } = await open(key.secret);
    ws.send(JSON.stringify({ id: 's', type: 'subscribe', payload: { query: SUBSCRIPTION } }));
    const first = await queueVideo(key.secret, `first ${round}`);
    await waitFor(() => nextsFor(frames, 's', first).length > 0);

    sendTogether({ id: 's', type: 'complete' }, { id: 's', type: 'subscribe', payload: { query: SUBSCRIPTION } });
    const second = await queueVideo(key.secret, `second ${round}`);
    await waitFor(() => nextsFor(frames, 's', second).length > 0);
    // The client completed the first operation itself: no `complete` may follow for that id.
    expect(frames.filter((f) => f.id === 's' && f.type !== 'next')).toEqual([]);

    // The id names the new operation on the server too: completing it ends it. A control
    // subscription sent after the complete on the same socket (whose messages are handled in
    // order) proves, once it hears a job's event, that the event went out after the complete.
    ws.send(JSON.stringify({ id: 's', type: 'complete' }));
    ws.send(JSON.stringify({ id: 'control', type: 'subscribe', payload: { query: SUBSCRIPTION } }));
    const third = await queueVideo(key.secret, `third ${round}`);
    await waitFor(() => nextsFor(frames, 'control', third).length > 0);
    const fourth = await queueVideo(key.secret, `fourth ${round}`);
    await waitFor(() => nextsFor(frames, 'control', fourth).length > 0);
    expect(nextsFor(frames, 's', third)).toEqual([]);
    expect(nextsFor(frames, 's', fourth)).toEqual([]);
    ws.close();
  }
});
