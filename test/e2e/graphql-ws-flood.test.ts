import WebSocket from 'ws';
import type { TestGateway } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { maskedTextFrames, openRawWebSocket } from '../support/raw-websocket';
import { pollUntil } from '../support/poll';

/**
 * One socket's flood of messages does not lock others out of the WebSocket door: 300,000 `ping`
 * messages from one socket that never sent `connection_init`, queued in one line with every
 * other socket's messages, would close every new client with 4408 for ~30 s (its
 * `connection_init` not handled within graphql-ws's 3 s). Each socket queues on its own, served
 * round robin, and a socket with more than 1,000 messages waiting is closed with 1008.
 */
const wsUrlOf = (gw: TestGateway) => `${gw.url.replace(/^http/, 'ws')}/graphql`;

/**
 * A graphql-ws client's first steps; answers whether `connection_ack` came, or the close code that
 * came instead (4408 when its `connection_init` was not handled within graphql-ws's 3 s).
 */
function connectionAck(url: string, token: string): Promise<{ acked: true } | { closed: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'graphql-transport-ws');
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })));
    ws.on('message', (data) => {
      if (JSON.parse(String(data)).type !== 'connection_ack') return;
      resolve({ acked: true });
      ws.close();
    });
    ws.on('close', (code) => resolve({ closed: code }));
    ws.on('error', reject);
  });
}

describe('a flood of messages from one WebSocket', () => {
  const gw = useTestGateway();
  let key: string;
  beforeAll(async () => {
    key = (await gw.newKey(await gw.newAccount(0))).secret;
  });

  test('another client still gets connection_ack, and the flooder is closed with 1008', async () => {
    const flooder = await openRawWebSocket(wsUrlOf(gw), 'graphql-transport-ws');
    // 300,000 pings in one write (6.3 MB), without connection_init, as the sweep sent them.
    flooder.socket.write(maskedTextFrames('{"type":"ping"}', 300_000));

    // One after another while the flood is read: each is acknowledged, none closed for a connection_init left unhandled.
    const victims: ({ acked: true } | { closed: number })[] = [];
    for (let i = 0; i < 3; i++) victims.push(await connectionAck(wsUrlOf(gw), key));
    expect(victims).toEqual([{ acked: true }, { acked: true }, { acked: true }]);

    expect(await flooder.closed).toEqual({ code: 1008, reason: expect.stringMatching(/^Too many messages waiting: at most 1000/) });
    // What it had queued was dropped, not answered: far fewer pongs than pings.
    expect(flooder.texts.length).toBeLessThan(5_000);
    expect(flooder.texts.every((t) => JSON.parse(t).type === 'pong')).toBe(true);
    // The instance still answers over HTTP.
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  }, 60_000);

  test('a few hundred messages sent at once are within the bound: every one is answered', async () => {
    const client = await openRawWebSocket(wsUrlOf(gw), 'graphql-transport-ws');
    const init = JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } });
    client.socket.write(Buffer.concat([maskedTextFrames(init, 1), maskedTextFrames('{"type":"ping"}', 500)]));
    await pollUntil(
      async () => client.texts.length,
      (n) => n >= 501,
      10_000,
      20,
    );
    // A ping is answered at once; the ack waits for the credential check, so it may come among the pongs.
    const types = client.texts.map((t) => JSON.parse(t).type as string);
    expect(types.filter((t) => t === 'pong')).toHaveLength(500);
    expect(types.filter((t) => t !== 'pong')).toEqual(['connection_ack']);
    client.socket.destroy();
  });
});
