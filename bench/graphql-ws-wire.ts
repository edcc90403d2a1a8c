/**
 * A minimal graphql-transport-ws client on a raw socket, for the fan-out bench's subscribers:
 * the WebSocket opening handshake (RFC 6455 §4, checked), masked client frames, and a frame
 * reader for the server's unmasked ones (text, continuation, ping → pong, close). Each message
 * is parsed as JSON and handed on with the time its frame was read.
 *
 * Why not `graphql-ws`'s createClient over `ws`: with 10,000 of them the client processes spend
 * about 40 µs of CPU per received message (stream and event-emitter layers, per-message
 * validation), which on this 2-core machine is taken from the gateway under test and shows up
 * as fan-out latency that is the clients' own queueing. This reader costs a fraction of that.
 * The wire protocol is the same one any graphql-ws client speaks; BENCH_FANOUT_CLIENT=graphql-ws
 * runs the library client instead, for comparison.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { Socket } from 'node:net';

const HANDSHAKE_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

const OP_CONTINUATION = 0x0;
const OP_TEXT = 0x1;
const OP_CLOSE = 0x8;
const OP_PING = 0x9;
const OP_PONG = 0xa;

export interface WireHandlers {
  /** One whole message (JSON), with the time its last frame was read. */
  message(message: Record<string, unknown>, receivedAt: number): void;
  /** The connection ended: the server's close code (1006 when it just went away). */
  closed(code: number, reason: string): void;
}

/** A client frame: FIN, the opcode, a fresh mask, the payload masked (RFC 6455 §5.3). */
function frame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const headerLength = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const out = Buffer.allocUnsafe(headerLength + 4 + length);
  out[0] = 0x80 | opcode;
  if (length < 126) {
    out[1] = 0x80 | length;
  } else if (length < 65536) {
    out[1] = 0x80 | 126;
    out.writeUInt16BE(length, 2);
  } else {
    out[1] = 0x80 | 127;
    out.writeBigUInt64BE(BigInt(length), 2);
  }
  const mask = randomBytes(4);
  mask.copy(out, headerLength);
  const start = headerLength + 4;
  for (let i = 0; i < length; i++) out[start + i] = payload[i] ^ mask[i & 3];
  return out;
}

export class WireClient {
  private pending: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private ended = false;

  private constructor(
    private readonly socket: Socket,
    private readonly handlers: WireHandlers,
    private readonly now: () => number,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('close', () => this.end(1006, 'connection lost'));
    socket.on('error', () => undefined);
  }

  /** Opens the WebSocket with the graphql-transport-ws subprotocol; rejects on anything but a correct 101. */
  static open(url: string, handlers: WireHandlers, now: () => number, localAddress?: string): Promise<WireClient> {
    const target = new URL(url.replace(/^ws/, 'http'));
    const key = randomBytes(16).toString('base64');
    const expected = createHash('sha1')
      .update(key + HANDSHAKE_GUID)
      .digest('base64');
    return new Promise((resolve, reject) => {
      const req = request({
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        localAddress,
        headers: {
          Connection: 'Upgrade',
          Upgrade: 'websocket',
          'Sec-WebSocket-Version': '13',
          'Sec-WebSocket-Key': key,
          'Sec-WebSocket-Protocol': 'graphql-transport-ws',
        },
      });
      req.on('upgrade', (res, socket, head) => {
        if (res.headers['sec-websocket-accept'] !== expected || res.headers['sec-websocket-protocol'] !== 'graphql-transport-ws') {
          socket.destroy();
          reject(new Error('bad WebSocket handshake answer'));
          return;
        }
        const client = new WireClient(socket, handlers, now);
        resolve(client);
        if (head.length > 0) client.read(head);
      });
      req.on('response', (res) => {
        res.resume();
        reject(new Error(`upgrade answered ${res.statusCode}`));
      });
      req.on('error', reject);
      req.end();
    });
  }

  send(message: Record<string, unknown>): void {
    if (!this.ended) this.socket.write(frame(OP_TEXT, Buffer.from(JSON.stringify(message))));
  }

  close(): void {
    if (this.ended) return;
    const body = Buffer.alloc(2);
    body.writeUInt16BE(1000, 0);
    this.socket.end(frame(OP_CLOSE, body));
  }

  private end(code: number, reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.handlers.closed(code, reason);
  }

  /** Reads every whole frame in what has arrived; keeps the rest for the next chunk. */
  private read(chunk: Buffer): void {
    const buf = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    let at = 0;
    while (buf.length - at >= 2) {
      const b0 = buf[at];
      const b1 = buf[at + 1];
      let length = b1 & 0x7f;
      let header = 2;
      if (length === 126) {
        if (buf.length - at < 4) break;
        length = buf.readUInt16BE(at + 2);
        header = 4;
      } else if (length === 127) {
        if (buf.length - at < 10) break;
        length = Number(buf.readBigUInt64BE(at + 2));
        header = 10;
      }
      if (b1 & 0x80) {
        this.socket.destroy();
        this.end(1002, 'the server masked a frame');
        return;
      }
      if (buf.length - at < header + length) break;
      const payload = buf.subarray(at + header, at + header + length);
      at += header + length;
      this.onFrame((b0 & 0x80) !== 0, b0 & 0x0f, payload);
    }
    this.pending = at < buf.length ? Buffer.from(buf.subarray(at)) : Buffer.alloc(0);
  }

  private onFrame(fin: boolean, opcode: number, payload: Buffer): void {
    switch (opcode) {
      case OP_TEXT:
      case OP_CONTINUATION: {
        if (!fin) {
          this.fragments.push(Buffer.from(payload));
          return;
        }
        const whole = this.fragments.length > 0 ? Buffer.concat([...this.fragments, payload]) : payload;
        this.fragments = [];
        const receivedAt = this.now();
        this.handlers.message(JSON.parse(whole.toString('utf8')) as Record<string, unknown>, receivedAt);
        return;
      }
      case OP_PING:
        if (!this.ended) this.socket.write(frame(OP_PONG, Buffer.from(payload)));
        return;
      case OP_PONG:
        return;
      case OP_CLOSE: {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        this.end(code, payload.subarray(2).toString('utf8'));
        this.socket.end();
        return;
      }
      default:
        this.socket.destroy();
        this.end(1002, `unknown opcode ${opcode}`);
    }
  }
}
