import { connect } from 'node:net';
import WebSocket from 'ws';
import { useTestGateway } from '../support/use-test-gateway';

/**
 * Requests that ask for an upgrade the gateway does not make. Node hands every request with
 * `Connection: Upgrade` to the server's 'upgrade' listeners once there is one (the WebSocket
 * door's), and the door destroyed any it did not take: curl --http2 on http:// (`Upgrade: h2c`)
 * got an empty reply from every path. Now such a request is served as ordinary HTTP/1.1 (the
 * upgrade ignored, the connection closed after the answer), and a WebSocket handshake to
 * /graphql that cannot succeed is answered in the error shape instead of ws's text/html.
 */

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes the request exactly as given, in `parts` (a body that arrives after its headers): each
 * handed to the kernel, and read by the server (this process) in the turns after it, before the
 * next is written. Reads the answer until the server closes the connection.
 */
function exchange(url: string, parts: string[]): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return resolve({ status: 0, headers: {}, body: text });
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4) });
    });
    void (async () => {
      for (const part of parts) {
        await new Promise((r) => socket.write(part, r));
        for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
      }
    })();
  });
}

/** What curl --http2 adds to a request on http://. */
const H2C = ['Connection: Upgrade, HTTP2-Settings', 'Upgrade: h2c', 'HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA'];
const head = (lines: string[]) => `${lines.join('\r\n')}\r\n\r\n`;

describe('requests with an Upgrade header', () => {
  const gw = useTestGateway();
  let key: string;
  beforeAll(async () => {
    key = (await gw.newKey(await gw.newAccount(50))).secret;
  });

  test('GET /healthz with an upgrade to an unknown protocol is answered as plain HTTP, then the connection closes', async () => {
    const res = await exchange(gw.url, [head(['GET /healthz HTTP/1.1', 'Host: x', 'Connection: Upgrade', 'Upgrade: foo'])]);
    expect(res.status).toBe(200);
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(res.body)).toMatchObject({ status: 'ok' });
  });

  test('a request with an upgrade pipelined behind another is answered after it', async () => {
    const res = await exchange(gw.url, [
      head(['GET /healthz HTTP/1.1', 'Host: x']) + head(['GET /healthz?second HTTP/1.1', 'Host: x', 'Connection: Upgrade', 'Upgrade: foo']),
    ]);
    expect(res.status).toBe(200);
    // Both answers came, the second one closing the connection.
    expect(res.body.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(1);
    expect(res.body).toMatch(/Connection: close\r\n/);
  });

  test("GET /v1/models with curl --http2's upgrade to h2c gets the model list over HTTP/1.1", async () => {
    const res = await exchange(gw.url, [head(['GET /v1/models HTTP/1.1', 'Host: x', `Authorization: Bearer ${key}`, ...H2C])]);
    expect(res.status).toBe(200);
    expect(res.headers.connection).toBe('close');
    const body = JSON.parse(res.body);
    expect(body.object).toBe('list');
    expect(body.data.length).toBeGreaterThan(0);
  });

  test('POST /v1/chat/completions with Upgrade: h2c reads the whole body, also when it arrives after the headers', async () => {
    const body = JSON.stringify({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'upgrade-ignored-marker' }], max_tokens: 40 });
    const lines = ['POST /v1/chat/completions HTTP/1.1', 'Host: x', `Authorization: Bearer ${key}`, 'Content-Type: application/json', ...H2C];
    const sized = await exchange(gw.url, [head([...lines, `Content-Length: ${Buffer.byteLength(body)}`]) + body.slice(0, 20), body.slice(20)]);
    expect(sized.status).toBe(200);
    expect(JSON.parse(sized.body).choices[0].message.content).toContain('upgrade-ignored-marker');

    const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
    const chunked = await exchange(gw.url, [head([...lines, 'Transfer-Encoding: chunked']), chunk(body.slice(0, 30)), chunk(body.slice(30)) + '0\r\n\r\n']);
    expect(chunked.status).toBe(200);
    expect(JSON.parse(chunked.body).choices[0].message.content).toContain('upgrade-ignored-marker');
  });

  test('POST /graphql with Upgrade: h2c is a GraphQL request like any other', async () => {
    const body = JSON.stringify({ query: '{ __typename }' });
    const res = await exchange(gw.url, [
      head(['POST /graphql HTTP/1.1', 'Host: x', `Authorization: Bearer ${key}`, 'Content-Type: application/json', `Content-Length: ${body.length}`, ...H2C]) +
        body,
    ]);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ data: { __typename: 'Query' } });
  });

  test('a WebSocket handshake to /graphql that cannot succeed is answered in the error shape, and the connection closed', async () => {
    const upgrade = ['GET /graphql HTTP/1.1', 'Host: x', 'Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Protocol: graphql-transport-ws'];
    const noKey = await exchange(gw.url, [head([...upgrade, 'Sec-WebSocket-Version: 13'])]);
    expect(noKey.status).toBe(400);
    expect(noKey.headers['content-type']).toMatch(/^application\/json/);
    expect(noKey.headers.connection).toBe('close');
    expect(JSON.parse(noKey.body)).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'invalid_websocket_handshake',
        param: 'Sec-WebSocket-Key',
        message: expect.stringContaining('Sec-WebSocket-Key'),
      },
    });

    const oldVersion = await exchange(gw.url, [head([...upgrade, 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 7'])]);
    expect(oldVersion.status).toBe(400);
    expect(oldVersion.headers['sec-websocket-version']).toBe('13');
    expect(JSON.parse(oldVersion.body).error).toMatchObject({ type: 'invalid_request_error', param: 'Sec-WebSocket-Version' });

    // What ws itself refuses (a malformed subprotocol list) comes in the same shape.
    const badProtocol = await exchange(gw.url, [
      head([
        'GET /graphql HTTP/1.1',
        'Host: x',
        'Connection: Upgrade',
        'Upgrade: websocket',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
        'Sec-WebSocket-Version: 13',
        'Sec-WebSocket-Protocol: a b',
      ]),
    ]);
    expect(badProtocol.status).toBe(400);
    expect(JSON.parse(badProtocol.body).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_websocket_handshake' });

    // The legacy protocol (subscriptions-transport-ws, Apollo Client 2/3) is told which one to
    // speak before the handshake, not given a 101 without a subprotocol it must abort.
    for (const offered of ['graphql-ws', 'graphql-ws, subscriptions-transport-ws']) {
      const legacy = await exchange(gw.url, [
        head([
          'GET /graphql HTTP/1.1',
          'Host: x',
          'Connection: Upgrade',
          'Upgrade: websocket',
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
          'Sec-WebSocket-Version: 13',
          `Sec-WebSocket-Protocol: ${offered}`,
        ]),
      ]);
      expect(legacy.status).toBe(400);
      expect(JSON.parse(legacy.body).error).toMatchObject({
        code: 'invalid_websocket_handshake',
        param: 'Sec-WebSocket-Protocol',
        message: expect.stringContaining("'graphql-transport-ws'"),
      });
    }

    // A proper handshake still opens the socket, also among other offers.
    const among = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/graphql`, ['graphql-ws', 'graphql-transport-ws']);
    await new Promise((resolve, reject) => {
      among.once('open', resolve);
      among.once('error', reject);
    });
    expect(among.protocol).toBe('graphql-transport-ws');
    among.close();
    // A proper handshake still opens the socket.
    const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.close();
  });
});
