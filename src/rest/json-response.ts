import type { ServerResponse } from 'node:http';

/**
 * Writes a whole JSON answer in one go on node:http (Express's response extends it): headers
 * and body leave in one socket write, and headers set earlier (a draining server's
 * `Connection: close`) are kept.
 */
export function sendJson(res: ServerResponse, status: number, headers: Record<string, string>, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(Buffer.byteLength(text)) });
  res.end(text);
}
