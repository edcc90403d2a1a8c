/**
 * An "instant" OpenAI-compatible upstream for the bench: answers POST /v1/chat/completions at
 * once, as JSON or (with `stream: true`) as server-sent events ending in `data: [DONE]`, with a
 * usage block either way. Every answer is prepared once, so the server costs next to nothing and
 * the bench measures the gateway, not the upstream. Under `/flaky/v1` every other call answers
 * 500 (the routes phase's failing route). Run in its own worker thread (see
 * upstream-worker.ts) so it never shares an event loop with the gateway under test.
 */
import { createServer, type Server } from 'node:http';

const USAGE = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };
const DELTAS = ['Hello', ' from', ' the', ' instant', ' upstream'];

const completion = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_767_225_600,
    model: 'bench-chat',
    choices: [{ index: 0, message: { role: 'assistant', content: DELTAS.join('') }, finish_reason: 'stop' }],
    usage: USAGE,
  }),
);

const chunk = (choices: object[], extra: object = {}) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_767_225_600, model: 'bench-chat', choices, ...extra })}\n\n`;

const stream = Buffer.from(
  chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]) +
    DELTAS.map((text) => chunk([{ index: 0, delta: { content: text }, finish_reason: null }])).join('') +
    chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]) +
    chunk([], { usage: USAGE }) +
    'data: [DONE]\n\n',
);

/** Under this prefix every other call answers 500: the routes phase's failing route. */
const FLAKY = '/flaky';
const serverError = Buffer.from('{"error":{"message":"flaky upstream","type":"server_error"}}');

export function createInstantUpstream(): Server {
  let flakyCalls = 0;
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const flaky = req.url?.startsWith(FLAKY) === true;
      if (flaky && flakyCalls++ % 2 === 0) {
        res.writeHead(500, { 'content-type': 'application/json', 'content-length': serverError.length }).end(serverError);
        return;
      }
      const path = flaky ? req.url!.slice(FLAKY.length) : req.url;
      if (req.method !== 'POST' || path !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found","type":"invalid_request_error"}}');
        return;
      }
      let streamed = false;
      try {
        streamed = (JSON.parse(Buffer.concat(parts).toString('utf8')) as { stream?: unknown }).stream === true;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad JSON","type":"invalid_request_error"}}');
        return;
      }
      if (streamed) {
        // Chunked, like a real streaming server (no Content-Length).
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.end(stream);
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': completion.length });
        res.end(completion);
      }
    });
  });
  server.keepAliveTimeout = 65_000;
  return server;
}
