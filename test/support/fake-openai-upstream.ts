/**
 * A fake OpenAI-compatible upstream for adapter tests: a real HTTP server on 127.0.0.1 that
 * speaks the real wire formats (JSON, SSE for streamed chat, b64_json PNGs, multipart edits),
 * records what it received, and can be switched into the failure modes an adapter must survive.
 *
 *   const upstream = await startFakeOpenAIUpstream();   // upstream.url ends with /v1
 *   upstream.setMode('error-500');
 *   upstream.requests[0].headers.authorization;
 *   await upstream.close();
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PNG } from 'pngjs';
import { sendAgentCompletion, streamAgentCompletion, validateChat, wantsAgentAnswer } from './fake-openai-chat';
import { streamImageEvents, type ImageStreamMode } from './fake-openai-images';

export type FakeOpenAIMode =
  | 'ok'
  /** 500 with an OpenAI error body that echoes the caller's Authorization header. */
  | 'error-500'
  /** 200 with a body that is not JSON (and echoes the Authorization header). */
  | 'malformed-json'
  /** 429 with `Retry-After: 7`, as OpenAI answers past a rate limit. */
  | 'rate-limited'
  /** Streams: 2 MB of content whatever max_tokens said, then finishes without a usage report. */
  | 'runaway-stream'
  /** Reads the request, never answers. */
  | 'hang'
  /** Destroys the socket without answering. */
  | 'reset'
  /** Streams: two deltas, then destroys the socket. JSON routes: same as `reset`. */
  | 'die-mid-stream'
  /** Streams: one delta (an image stream: its previews), then waits for `releaseHeld()` before the rest, as in `ok`. */
  | 'held-stream'
  /** Plain (non-streamed) chat waits for `releaseHeld()`, then answers as in `ok`. */
  | 'held-json'
  /** Streams: one delta, then goes silent while keeping the connection open. */
  | 'stall-mid-stream'
  /** Streams: finish reason and usage, then a clean end without `data: [DONE]` (an image stream: its previews, and no image). */
  | 'stream-without-done'
  /** Image streams: one preview, then an `error` event. */
  | 'stream-error-event'
  /** Streams the whole answer and `data: [DONE]`, then keeps the response open. */
  | 'linger-after-done'
  /** Answers a stream request with one JSON completion, as some servers do. */
  | 'ignore-stream'
  /** 400 `content_policy_violation`, as OpenAI answers a refused image prompt. */
  | 'content-policy'
  /** Images answer `{ url }` pointing back at this server instead of `{ b64_json }`. */
  | 'image-url'
  /** Images answer one image fewer than asked (none when one was asked). */
  | 'fewer-images'
  /** 400 blaming the request, in words that name the upstream's model, its URL and its key. */
  | 'bad-request'
  /** Chat answers as usual but reports HUGE_USAGE: far more than any hold. */
  | 'huge-usage'
  /** Chat answers as usual but reports 1e15 prompt and completion tokens: more than any call could use. */
  | 'absurd-usage'
  /** Chat answers as usual but reports negative token counts. */
  | 'negative-usage'
  /** Streams: `data: ` and then 6 MB without a line end. */
  | 'endless-line'
  /** A JSON answer with what a search-capable model adds: url_citation annotations, a system fingerprint, a service tier (a stream: the last two on every chunk). */
  | 'cited'
  /** Images answered with a `revised_prompt` each (as dall-e-3 does). */
  | 'revised-prompt'
  /** Images answered as gpt-image models answer: top-level GPT_IMAGE_ABOUT (usage, size, quality, output_format, background). */
  | 'gpt-image'
  /** As held-json, with HUGE_USAGE reported once released. */
  | 'held-huge-json';

export interface MultipartPart {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  /** The parsed body of a JSON request. */
  json?: any;
  /** The parts of a multipart/form-data request. */
  parts?: MultipartPart[];
}

export interface FakeOpenAIUpstream {
  /** Base URL including `/v1`, as an adapter's baseUrl expects. */
  url: string;
  requests: RecordedRequest[];
  /** TCP connections accepted so far (keep-alive reuse shows as fewer connections than requests). */
  readonly connections: number;
  setMode(mode: FakeOpenAIMode): void;
  /** Lets the streams held by `held-stream` go on to their end. */
  releaseHeld(): void;
  close(): Promise<void>;
}

/** The text the fake streams (and answers) for every chat request. Has a multi-byte character. */
export const FAKE_CHAT_REPLY = 'Hello wörld';
export const FAKE_CHAT_DELTAS = ['Hel', 'lo', ' wörld'];
export const FAKE_USAGE = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 };
/** What `huge-usage` reports: 1.61 credits at 1 credit per 10k tokens, within what a call with max_tokens 100 allows. */
export const HUGE_USAGE = { prompt_tokens: 16_000, completion_tokens: 100, total_tokens: 16_100 };

export const ABSURD_USAGE = { prompt_tokens: 1e15, completion_tokens: 1e15, total_tokens: 2e15 };
export const NEGATIVE_USAGE = { prompt_tokens: -1000, completion_tokens: -5000, total_tokens: -6000 };

export async function startFakeOpenAIUpstream(): Promise<FakeOpenAIUpstream> {
  let mode: FakeOpenAIMode = 'ok';
  let connections = 0;
  const requests: RecordedRequest[] = [];
  let baseUrl = '';
  let releaseHeld = () => {};
  let held = new Promise<void>((r) => (releaseHeld = r));

  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const recorded = record(req, raw);
      requests.push(recorded);
      handle(recorded, req, res).catch(() => res.destroy());
    });
  });
  server.on('connection', () => connections++);

  async function handle(r: RecordedRequest, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (r.method === 'GET' && r.path.startsWith('/v1/files/')) return sendPng(res, 16, 16);
    if (mode === 'hang') return;
    if (mode === 'rate-limited') {
      res.setHeader('Retry-After', '7');
      return sendJson(res, 429, { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } });
    }
    const field = (name: string) => r.parts?.find((p) => p.name === name)?.data.toString();
    const streamed = r.json?.stream === true || field('stream') === 'true';
    if (mode === 'reset' || (mode === 'die-mid-stream' && !streamed)) return void req.socket.destroy();
    if (mode === 'error-500') {
      return sendJson(res, 500, { error: { message: `Internal error for ${r.headers.authorization}`, type: 'server_error' } });
    }
    if (mode === 'malformed-json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(`{"choices": [ oops ${r.headers.authorization}`);
    }
    if (mode === 'content-policy') {
      return sendJson(res, 400, {
        error: {
          message: 'Your request was rejected as a result of our safety system.',
          type: 'invalid_request_error',
          param: null,
          code: 'content_policy_violation',
        },
      });
    }
    if (mode === 'bad-request') {
      return sendJson(res, 400, {
        error: {
          message: `Invalid schema for model ${r.json?.model}: see ${baseUrl}/docs (key ${r.headers.authorization})`,
          type: 'invalid_request_error',
          param: 'response_format',
          code: 'invalid_json_schema',
        },
      });
    }
    switch (`${r.method} ${r.path}`) {
      case 'POST /v1/chat/completions': {
        // OpenAI refuses what it does not know, and tool turns out of order, with a 400.
        const invalid = validateChat(r.json);
        if (invalid) return sendJson(res, 400, { error: { ...invalid, type: 'invalid_request_error', code: null } });
        if (wantsAgentAnswer(r.json)) return r.json.stream ? streamAgentCompletion(res, r.json) : sendAgentCompletion(res, r.json);
        const usage =
          { 'huge-usage': HUGE_USAGE, 'held-huge-json': HUGE_USAGE, 'absurd-usage': ABSURD_USAGE, 'negative-usage': NEGATIVE_USAGE }[mode as string] ??
          FAKE_USAGE;
        if ((mode === 'held-json' || mode === 'held-huge-json') && !r.json?.stream) await held;
        if (mode === 'cited' && !r.json?.stream) return sendJson(res, 200, citedCompletion(r.json?.model));
        return r.json?.stream && mode !== 'ignore-stream' ? streamChat(res, usage) : sendJson(res, 200, chatCompletion(r.json?.model, usage));
      }
      case 'POST /v1/images/generations':
        if (mode === 'held-json') await held;
        if (streamed && mode !== 'ignore-stream') return streamImages(res, 'image_generation', r.json?.partial_images, r.json?.size);
        return sendImages(res, (r.json?.n ?? 1) - (mode === 'fewer-images' ? 1 : 0), r.json?.size);
      case 'POST /v1/images/edits': {
        const hasImage = r.parts?.some((p) => p.name === 'image' || p.name === 'image[]');
        if (!hasImage) return sendJson(res, 400, { error: { message: 'image is required', type: 'invalid_request_error' } });
        if (streamed && mode !== 'ignore-stream') return streamImages(res, 'image_edit', Number(field('partial_images') ?? 0), field('size'));
        return sendImages(res, Number(field('n') ?? 1), field('size'));
      }
      default:
        return sendJson(res, 404, { error: { message: 'Unknown route', type: 'invalid_request_error' } });
    }
  }

  async function streamChat(res: ServerResponse, usageReported: object): Promise<void> {
    res.socket?.setNoDelay(true);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    // `cited` streams as OpenAI does: every chunk names the service tier and the system fingerprint.
    const said = mode === 'cited' ? { service_tier: 'flex', system_fingerprint: 'fp_fake1' } : {};
    const chunk = (choice: object | null, extra: object = {}) =>
      `data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 0, model: 'fake', ...said, choices: choice ? [choice] : [], ...extra })}\n\n`;
    const deltas = FAKE_CHAT_DELTAS.map((text) => chunk({ index: 0, delta: { content: text }, finish_reason: null }));
    const head = chunk({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null });
    if (mode === 'die-mid-stream') {
      res.write(head + deltas[0] + deltas[1]);
      await pause(20);
      return void res.socket?.destroy();
    }
    if (mode === 'stall-mid-stream') return void res.write(head + deltas[0]);
    if (mode === 'runaway-stream') {
      res.write(head);
      const piece = chunk({ index: 0, delta: { content: 'word '.repeat(200) }, finish_reason: null });
      for (let i = 0; i < 2000 && !res.destroyed; i++) if (!res.write(piece)) await new Promise((r) => res.once('drain', r));
      return void res.end(chunk({ index: 0, delta: {}, finish_reason: 'stop' }) + 'data: [DONE]\n\n');
    }
    if (mode === 'endless-line') {
      res.write('data: ');
      for (let i = 0; i < 6 && !res.destroyed; i++) res.write('x'.repeat(1024 * 1024));
      return void res.end();
    }
    const finish = chunk({ index: 0, delta: {}, finish_reason: 'stop' });
    const usage = chunk(null, { usage: usageReported });
    if (mode === 'held-stream') {
      res.write(head + deltas[0]);
      await held;
      res.end(deltas.slice(1).join('') + finish + usage + 'data: [DONE]\n\n');
      return;
    }
    const tail = mode === 'stream-without-done' ? '' : 'data: [DONE]\n\n';
    const whole = Buffer.from(head + ': keep-alive comment\n\n' + deltas.join('') + finish + usage + tail);
    // Cut the stream where a careless parser breaks: inside a `data:` line, and between the
    // two bytes of the "ö", with a pause so each piece arrives as its own network chunk.
    const umlaut = whole.indexOf(Buffer.from('ö'));
    const cuts = [whole.indexOf(Buffer.from('"Hel')) + 2, umlaut + 1, whole.length];
    let from = 0;
    for (const cut of cuts) {
      res.write(whole.subarray(from, cut));
      from = cut;
      await pause(15);
    }
    if (mode !== 'linger-after-done') res.end();
  }

  function streamImages(res: ServerResponse, kind: 'image_generation' | 'image_edit', partialImages: number | undefined, size: string | undefined) {
    const [width, height] = parseSize(size);
    const streamMode = (['die-mid-stream', 'held-stream', 'stream-without-done', 'stream-error-event'] as string[]).includes(mode)
      ? (mode as ImageStreamMode)
      : 'ok';
    return streamImageEvents(res, { kind, partialImages: partialImages ?? 0, width, height, mode: streamMode, held: () => held });
  }

  function sendImages(res: ServerResponse, n: number, size: string | undefined): void {
    const [w, h] = parseSize(size);
    const data = Array.from({ length: n }, (_, i) =>
      mode === 'image-url'
        ? { url: `${baseUrl}/files/image-${i}.png` }
        : { b64_json: makePng(w, h).toString('base64'), ...(mode === 'revised-prompt' ? { revised_prompt: `revised ${i}` } : {}) },
    );
    sendJson(res, 200, { created: Math.floor(Date.now() / 1000), data, ...(mode === 'gpt-image' ? GPT_IMAGE_ABOUT : {}) });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    url: baseUrl,
    requests,
    get connections() {
      return connections;
    },
    setMode(next) {
      mode = next;
    },
    releaseHeld() {
      releaseHeld();
      held = new Promise<void>((r) => (releaseHeld = r));
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What a gpt-image model's images answer says besides the images. */
export const GPT_IMAGE_ABOUT = {
  background: 'opaque',
  output_format: 'png',
  quality: 'low',
  size: '1024x1024',
  usage: { input_tokens: 50, input_tokens_details: { image_tokens: 40, text_tokens: 10 }, output_tokens: 272, total_tokens: 322 },
};

export const FAKE_CITATION = { type: 'url_citation', url_citation: { url: 'https://example.com/a', title: 'A', start_index: 0, end_index: 5 } };

function citedCompletion(model: string) {
  const body = chatCompletion(model);
  return {
    ...body,
    choices: [{ ...body.choices[0], message: { ...body.choices[0].message, annotations: [FAKE_CITATION] } }],
    system_fingerprint: 'fp_fake1',
    service_tier: 'flex',
  };
}

function chatCompletion(model: string, usage: object = FAKE_USAGE) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 0,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: FAKE_CHAT_REPLY }, finish_reason: 'stop' }],
    usage,
  };
}

/** A real, decodable PNG (sizes are capped so a test cannot ask for megabytes by accident). */
export function makePng(width: number, height: number): Buffer {
  const png = new PNG({ width: Math.min(width, 256), height: Math.min(height, 256) });
  png.data.fill(0x80);
  return PNG.sync.write(png);
}

function sendPng(res: ServerResponse, w: number, h: number): void {
  const png = makePng(w, h);
  res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
  res.end(png);
}

function parseSize(size: string | undefined): [number, number] {
  const match = /^(\d+)x(\d+)$/.exec(size ?? '');
  return match ? [Number(match[1]), Number(match[2])] : [8, 8];
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function record(req: IncomingMessage, raw: Buffer): RecordedRequest {
  const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw };
  const type = req.headers['content-type'] ?? '';
  if (type.startsWith('application/json')) {
    try {
      recorded.json = JSON.parse(raw.toString('utf8'));
    } catch {
      // Left undefined: the test sees the raw bytes.
    }
  } else if (type.startsWith('multipart/form-data')) {
    const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(type);
    if (boundary) recorded.parts = parseMultipart(raw, boundary[1] ?? boundary[2]);
  }
  return recorded;
}

/** Just enough multipart/form-data parsing to check what an adapter sent. */
export function parseMultipart(raw: Buffer, boundary: string): MultipartPart[] {
  const parts: MultipartPart[] = [];
  const delimiter = Buffer.from(`--${boundary}`);
  let at = raw.indexOf(delimiter);
  while (at !== -1) {
    const start = at + delimiter.length;
    if (raw.subarray(start, start + 2).toString() === '--') break;
    const next = raw.indexOf(delimiter, start);
    if (next === -1) break;
    const part = raw.subarray(start + 2, next - 2); // drop the CRLF after the delimiter and before the next
    const split = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, split).toString('utf8');
    const disposition = /name="([^"]*)"(?:; filename="([^"]*)")?/.exec(head);
    parts.push({
      name: disposition?.[1] ?? '',
      filename: disposition?.[2],
      contentType: /content-type:\s*(.+)/i.exec(head)?.[1].trim(),
      data: part.subarray(split + 4),
    });
    at = next;
  }
  return parts;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve(Buffer.concat(chunks)));
  });
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
