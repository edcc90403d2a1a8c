import WebSocket from 'ws';
import type { TestGateway } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { maskedTextFrames, openRawWebSocket } from '../support/raw-websocket';

/**
 * One socket's flood of messages does not lock others out of the WebSocket door: 300,000 `ping`
 * messages from one socket that never sent `connection_init`, queued in one line with every
 * other socket's messages, would close every new client with 4408 for ~30 s (its
 * `connection_init` not handled within graphql-ws's 3 s). Each socket queues on its own, served
 * round robin, and a socket with more than 1,000 messages waiting is closed with 1008.
 */
const wsUrlOf = (gw: TestGateway) => `${gw.url.replace(/^http/, 'ws')}/graphql`;

/** A graphql-ws client's first steps; answers how long `connection_ack` took, or the close code that came instead. */
function connectionAck(url: string, token: string): Promise<{ ackMs: number } | { closed: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const ws = new WebSocket(url, 'graphql-transport-ws');
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })));
    ws.on('message', (data) => {
      if (JSON.parse(String(data)).type !== 'connection_ack') return;
      resolve({ ackMs: Date.now() - started });
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

  test('another client still gets connection_ack promptly, and the flooder is closed with 1008', async () => {
    const flooder = await openRawWebSocket(wsUrlOf(gw), 'graphql-transport-ws');
    // 300,000 pings in one write (6.3 MB), without connection_init, as the sweep sent them.
    flooder.socket.write(maskedTextFrames('{"type":"ping"}', 300_000));

    const victims: ({ ackMs: number } | { closed: number })[] = [];
    for (let i = 0; i < 3; i++) {
      victims.push(await connectionAck(wsUrlOf(gw), key));
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const v of victims) {
      expect(v).toEqual({ ackMs: expect.any(Number) });
      expect((v as { ackMs: number }).ackMs).toBeLessThan(2_000);
    }

    expect(await flooder.closed).toEqual({ code: 1008, reason: expect.stringMatching(/^Too many messages waiting: at most 1000/) });
    // What it had queued was dropped, not answered: far fewer pongs than pings.
    expect(flooder.texts.length).toBeLessThan(5_000);
    expect(flooder.texts.every((t) => JSON.parse(t).type === 'pong')).toBe(true);
    // The instance is still quick to answer over HTTP.
    const started = Date.now();
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1_000);
  }, 60_000);

  test('a few hundred messages sent at once are within the bound: every one is answered', async () => {
    const client = await openRawWebSocket(wsUrlOf(gw), 'graphql-transport-ws');
    const init = JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } });
    client.socket.write(Buffer.concat([maskedTextFrames(init, 1), maskedTextFrames('{"type":"ping"}', 500)]));
    const deadline = Date.now() + 10_000;
    while (client.texts.length < 501 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    // A ping is answered at once; the ack waits for the credential check, so it may come among the pongs.
    const types = client.texts.map((t) => JSON.parse(t).type as string);
    expect(types.filter((t) => t === 'pong')).toHaveLength(500);
    expect(types.filter((t) => t !== 'pong')).toEqual(['connection_ack']);
    client.socket.destroy();
  });
});
