import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends a request exactly as written (fetch would join repeated headers into one, or refuse
 * bytes it considers invalid) on a connection of its own, and reads the answer up to its close.
 * `head` is the request line and header lines without the final blank line; a
 * `Connection: close` is added so the server ends the answer by closing.
 */
export function rawRequest(url: string, head: string[], body: Buffer | string = ''): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      let rest: Buffer = Buffer.from(text.slice(split + 4), 'latin1');
      if (headers['transfer-encoding'] === 'chunked') rest = dechunk(rest);
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.toString('utf8') });
    });
    const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
    const lines = [...head, 'Connection: close', ...(bytes.length ? [`Content-Length: ${bytes.length}`] : [])];
    // Written, not ended: a half-closed request reads to the gateway as a client that went away.
    socket.write(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), bytes]));
  });
}

function dechunk(buf: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', at);
    const size = parseInt(buf.subarray(at, eol).toString('latin1'), 16);
    if (!size) return Buffer.concat(out);
    out.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}
