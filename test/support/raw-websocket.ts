import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';

/**
 * A WebSocket client on a bare TCP socket, for what a library client cannot do: write many
 * frames in one go (a flood built as one buffer, without a send per frame holding the test's
 * event loop), and see exactly what the server sent before its close frame.
 */
export interface RawWebSocket {
  socket: Socket;
  /** Text frames the server sent, in order, until its close frame. */
  texts: string[];
  /** The server's close frame, or null when the connection ended without one. */
  closed: Promise<{ code: number; reason: string } | null>;
}

/** Opens `url` (ws://) with `protocol`; resolves once the server answered 101. */
export function openRawWebSocket(url: string, protocol: string): Promise<RawWebSocket> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const texts: string[] = [];
    let settleClosed: (v: { code: number; reason: string } | null) => void = () => undefined;
    const closed = new Promise<{ code: number; reason: string } | null>((r) => (settleClosed = r));
    let buffered = Buffer.alloc(0);
    let upgraded = false;
    socket.on('error', (err) => (upgraded ? settleClosed(null) : reject(err)));
    socket.on('close', () => settleClosed(null));
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (!upgraded) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffered.subarray(0, end).toString('latin1');
        if (!head.startsWith('HTTP/1.1 101')) return reject(new Error(`upgrade refused: ${head.split('\r\n')[0]}`));
        upgraded = true;
        buffered = buffered.subarray(end + 4);
        resolve({ socket, texts, closed });
      }
      // Server frames are unmasked: opcode, length (7 bits, or 16 / 64 bits after 126 / 127), payload.
      for (;;) {
        if (buffered.length < 2) return;
        const opcode = buffered[0] & 0x0f;
        let length = buffered[1] & 0x7f;
        let at = 2;
        if (length === 126) {
          if (buffered.length < 4) return;
          length = buffered.readUInt16BE(2);
          at = 4;
        } else if (length === 127) {
          if (buffered.length < 10) return;
          length = Number(buffered.readBigUInt64BE(2));
          at = 10;
        }
        if (buffered.length < at + length) return;
        const payload = buffered.subarray(at, at + length);
        buffered = buffered.subarray(at + length);
        if (opcode === 0x1) texts.push(payload.toString('utf8'));
        if (opcode === 0x8) {
          settleClosed({ code: payload.length >= 2 ? payload.readUInt16BE(0) : 1005, reason: payload.subarray(2).toString('utf8') });
          socket.destroy();
          return;
        }
      }
    });
    socket.write(
      `GET ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
        `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Protocol: ${protocol}\r\n\r\n`,
    );
  });
}

/** `count` masked text frames of `text` (under 64 KiB) back to back, as a client sends them (mask key zero: payload unchanged). */
export function maskedTextFrames(text: string, count: number): Buffer {
  const payload = Buffer.from(text);
  if (payload.length > 0xffff) throw new Error('at most 64 KiB a frame');
  const length = payload.length < 126 ? [0x80 | payload.length] : [0x80 | 126, payload.length >> 8, payload.length & 0xff];
  const frame = Buffer.concat([Buffer.from([0x81, ...length, 0, 0, 0, 0]), payload]);
  const all = Buffer.allocUnsafe(frame.length * count);
  for (let i = 0; i < count; i++) frame.copy(all, i * frame.length);
  return all;
}
