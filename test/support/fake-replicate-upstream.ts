/**
 * A fake of Replicate's predictions API for the adapter tests: a real HTTP server on 127.0.0.1
 * that creates predictions (models and version endpoints), answers gets and cancels, holds a
 * create sent with `Prefer: wait`, serves the output files itself, records what it received,
 * and can be switched into the failure modes that matter.
 *
 *   const replicate = await startFakeReplicateUpstream({ token: 'r8_secret' });
 *   replicate.setScript({ finishAfterPolls: 2, outcome: 'failed', error: 'NSFW content detected.' });
 *   await replicate.setMode('429');
 *
 * A prediction is created `starting`; each get of a running one answers `processing` (its logs
 * growing a tqdm progress bar) until `finishAfterPolls` gets have, or `finishAfterMs` passed,
 * or the test called complete() / fail(); then it shows the script's outcome.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { makePng } from './fake-openai-upstream';

export type FakeReplicateMode =
  | 'ok'
  /**
   * Not listening at all: new connections are refused. Open ones are closed, so a client that
   * pooled one may first see it closed (a socket error) before it dials and is refused.
   */
  | 'refuse'
  /** The socket is destroyed once the request was read; nothing is created. */
  | 'reset'
  /** 429 with Retry-After: FAKE_RETRY_AFTER. */
  | '429'
  | '500'
  /** The request is read and never answered. */
  | 'stall'
  /** A create makes its prediction, then the socket is destroyed without an answer. */
  | 'lose-answer';

export interface FakeReplicateScript {
  /** Gets answered `processing` before the outcome shows (Infinity: only complete()/fail()). */
  finishAfterPolls: number;
  /** Or: the prediction ends this long after its creation. */
  finishAfterMs: number;
  outcome: 'succeeded' | 'failed' | 'canceled';
  /** The `error` of a failed prediction. */
  error: string;
  /** Output shape: auto is a list of PNGs for an input with num_outputs, else one MP4 URL. */
  output: 'auto' | 'string' | 'array' | 'none';
  /** How many PNGs a succeeded image prediction lists (undefined: its num_outputs, as asked). */
  imageCount?: number;
  /** The output files answer 404. */
  mediaMissing: boolean;
  /** Longest a create with `Prefer: wait=N` is held (Replicate holds it N seconds). */
  maxWaitMs: number;
  /**
   * Image outputs inline as `data:` URIs (as Replicate's sync mode may answer), not URLs of this
   * server: a gateway downloads upstream URLs only from public addresses, and this fake is on loopback.
   */
  inline?: boolean;
}

export interface FakePrediction {
  id: string;
  /** `owner/name` for the models endpoint; undefined for a version. */
  model?: string;
  version?: string;
  input: Record<string, unknown>;
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';
  output: unknown;
  error: string | null;
  logs: string;
  polls: number;
  script: FakeReplicateScript;
}

export interface RecordedReplicateRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body?: any;
}

export interface FakeReplicateUpstream {
  url: string;
  requests: RecordedReplicateRequest[];
  predictions: Map<string, FakePrediction>;
  /** Applies to the API (/v1); output files are always served while listening. */
  setMode(mode: FakeReplicateMode): Promise<void>;
  /** How predictions created from now on run. */
  setScript(script: Partial<FakeReplicateScript>): void;
  complete(id: string): void;
  fail(id: string, error: string): void;
  /** Back to mode ok, the default script, no requests, no predictions, ids from p1 again. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export const FAKE_RETRY_AFTER = '7';
/** The bytes served as an output video (an MP4 `ftyp` box header and filler). */
export const FAKE_REPLICATE_VIDEO = Buffer.concat([Buffer.from('000000186674797069736f6d00000200', 'hex'), Buffer.alloc(64, 2)]);

const DEFAULT_SCRIPT: FakeReplicateScript = {
  finishAfterPolls: 1,
  finishAfterMs: Infinity,
  outcome: 'succeeded',
  error: 'Prediction failed.',
  output: 'auto',
  mediaMissing: false,
  maxWaitMs: 60_000,
};

export async function startFakeReplicateUpstream(options: { token?: string } = {}): Promise<FakeReplicateUpstream> {
  let mode: FakeReplicateMode = 'ok';
  let script = { ...DEFAULT_SCRIPT };
  const requests: RecordedReplicateRequest[] = [];
  const predictions = new Map<string, FakePrediction>();
  /** Held creates waiting for their prediction to end (by object: ids restart after reset()). */
  const waiters = new WeakMap<FakePrediction, Array<() => void>>();
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();
  let nextId = 1;
  let baseUrl = '';
  let port = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const recorded: RecordedReplicateRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers };
      try {
        if (raw) recorded.body = JSON.parse(raw);
      } catch {
        recorded.body = raw;
      }
      requests.push(recorded);
      handle(recorded, res);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  function later(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  }

  function handle(r: RecordedReplicateRequest, res: ServerResponse): void {
    const file = /^\/files\/(p\d+)(?:-(\d+))?\.(png|mp4)$/.exec(r.path);
    if (r.method === 'GET' && file) return serveFile(res, file[1], file[3]);
    if (mode === 'reset') return void res.socket?.destroy();
    if (mode === 'stall') return;
    if (mode === '429') {
      return sendJson(
        res,
        429,
        { title: 'Request was throttled.', detail: `Request was throttled. Your rate limit resets in ~${FAKE_RETRY_AFTER}s.`, status: 429 },
        { 'retry-after': FAKE_RETRY_AFTER },
      );
    }
    if (mode === '500') return sendJson(res, 500, { title: 'Internal Server Error', detail: 'Internal Server Error', status: 500 });
    if (options.token !== undefined && r.headers.authorization !== `Bearer ${options.token}`) {
      return sendJson(res, 401, { title: 'Unauthenticated', detail: 'You did not pass a valid authentication token', status: 401 });
    }
    const model = /^\/v1\/models\/([^/]+)\/([^/]+)\/predictions$/.exec(r.path);
    if (r.method === 'POST' && (model || r.path === '/v1/predictions')) return create(r, res, model ? `${model[1]}/${model[2]}` : undefined);
    if (mode === 'lose-answer') return void res.socket?.destroy();
    const cancel = /^\/v1\/predictions\/([^/]+)\/cancel$/.exec(r.path);
    if (r.method === 'POST' && cancel) return cancelPrediction(res, cancel[1]);
    const get = /^\/v1\/predictions\/([^/]+)$/.exec(r.path);
    if (r.method === 'GET' && get) return getPrediction(res, get[1]);
    sendJson(res, 404, { detail: 'Not found.' });
  }

  function create(r: RecordedReplicateRequest, res: ServerResponse, model: string | undefined): void {
    const body = (r.body ?? {}) as { input?: unknown; version?: unknown };
    if (!body.input || typeof body.input !== 'object') {
      return sendJson(res, 422, { title: 'Input validation failed', detail: '- input: input is required', status: 422 });
    }
    if (!model && typeof body.version !== 'string') {
      return sendJson(res, 422, { title: 'Invalid version', detail: 'version is required', status: 422 });
    }
    const p: FakePrediction = {
      id: `p${nextId++}`,
      model,
      version: model ? undefined : (body.version as string),
      input: body.input as Record<string, unknown>,
      status: 'starting',
      output: null,
      error: null,
      logs: '',
      polls: 0,
      script: { ...script },
    };
    predictions.set(p.id, p);
    if (Number.isFinite(p.script.finishAfterMs)) later(p.script.finishAfterMs, () => finish(p));
    if (mode === 'lose-answer') return void res.socket?.destroy();
    const wait = /\bwait(?:=(\d+))?/.exec(String(r.headers.prefer ?? ''));
    if (!wait || isTerminal(p)) return sendJson(res, 201, view(p));
    let answered = false;
    const answer = () => {
      if (answered) return;
      answered = true;
      if (p.status === 'starting') p.status = 'processing';
      sendJson(res, 201, view(p));
    };
    waiters.set(p, [...(waiters.get(p) ?? []), answer]);
    later(Math.min(Number(wait[1] ?? 60) * 1000, p.script.maxWaitMs), answer);
  }

  function getPrediction(res: ServerResponse, id: string): void {
    const p = predictions.get(id);
    if (!p) return sendJson(res, 404, { detail: 'Not found.' });
    if (!isTerminal(p)) {
      p.polls++;
      if (p.polls > p.script.finishAfterPolls) finish(p);
      else {
        p.status = 'processing';
        const share = Number.isFinite(p.script.finishAfterPolls) ? Math.round((100 * p.polls) / (p.script.finishAfterPolls + 1)) : 50;
        p.logs += `Generating...\n ${String(share).padStart(3)}%|${'█'.repeat(share / 10)}| ${p.polls}/${p.script.finishAfterPolls + 1}\n`;
      }
    }
    sendJson(res, 200, view(p));
  }

  function cancelPrediction(res: ServerResponse, id: string): void {
    const p = predictions.get(id);
    if (!p) return sendJson(res, 404, { detail: 'Not found.' });
    // As Replicate: cancelling a finished prediction changes nothing and still answers it.
    if (!isTerminal(p)) end(p, 'canceled');
    sendJson(res, 200, view(p));
  }

  function finish(p: FakePrediction, outcome = p.script.outcome, error = p.script.error): void {
    if (isTerminal(p)) return;
    if (outcome === 'succeeded') p.output = outputOf(p);
    if (outcome === 'failed') p.error = error;
    end(p, outcome);
  }

  function end(p: FakePrediction, status: FakePrediction['status']): void {
    p.status = status;
    for (const wake of waiters.get(p) ?? []) wake();
    waiters.delete(p);
  }

  function outputOf(p: FakePrediction): unknown {
    const images = typeof p.input.num_outputs === 'number';
    const urls = images
      ? Array.from({ length: Math.max(1, Math.min(8, p.script.imageCount ?? (p.input.num_outputs as number))) }, (_, i) => `${baseUrl}/files/${p.id}-${i}.png`)
      : [`${baseUrl}/files/${p.id}.mp4`];
    const shape = p.script.output === 'auto' ? (images ? 'array' : 'string') : p.script.output;
    if (p.script.inline && images) {
      return urls.map(() => `data:image/png;base64,${makePng(Number(p.input.width ?? 8), Number(p.input.height ?? 8)).toString('base64')}`);
    }
    return shape === 'none' ? null : shape === 'string' ? urls[0] : urls;
  }

  function serveFile(res: ServerResponse, id: string, ext: string): void {
    const p = predictions.get(id);
    if (!p || p.script.mediaMissing) return sendJson(res, 404, { detail: 'Not found.' });
    const data = ext === 'png' ? makePng(Number(p.input.width ?? 8), Number(p.input.height ?? 8)) : FAKE_REPLICATE_VIDEO;
    res.writeHead(200, { 'content-type': ext === 'png' ? 'image/png' : 'video/mp4', 'content-length': data.length });
    res.end(data);
  }

  function view(p: FakePrediction): Record<string, unknown> {
    const url = `${baseUrl}/v1/predictions/${p.id}`;
    return {
      id: p.id,
      model: p.model ?? 'owner/versioned-model',
      version: p.version ?? 'hidden',
      input: p.input,
      logs: p.logs,
      output: p.output,
      error: p.error,
      status: p.status,
      created_at: new Date().toISOString(),
      urls: { get: url, cancel: `${url}/cancel`, web: `https://replicate.com/p/${p.id}` },
      metrics: isTerminal(p) ? { predict_time: 0.01 } : {},
    };
  }

  function clearTimers(): void {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
  }

  function listen(): Promise<void> {
    return new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  }

  function stopListening(): Promise<void> {
    if (!server.listening) return Promise.resolve();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    return closed;
  }

  async function setMode(next: FakeReplicateMode): Promise<void> {
    if (next === 'refuse') await stopListening();
    else if (!server.listening) await listen();
    mode = next;
  }

  await listen();
  port = (server.address() as AddressInfo).port;
  baseUrl = `http://127.0.0.1:${port}`;
  return {
    url: baseUrl,
    requests,
    predictions,
    setMode,
    setScript(next) {
      script = { ...script, ...next };
    },
    complete(id) {
      const p = predictions.get(id);
      if (p) finish(p, 'succeeded');
    },
    fail(id, error) {
      const p = predictions.get(id);
      if (p) finish(p, 'failed', error);
    },
    async reset() {
      clearTimers();
      await setMode('ok');
      script = { ...DEFAULT_SCRIPT };
      requests.length = 0;
      predictions.clear();
      nextId = 1;
    },
    async close() {
      clearTimers();
      await stopListening();
    },
  };
}

function isTerminal(p: FakePrediction): boolean {
  return p.status === 'succeeded' || p.status === 'failed' || p.status === 'canceled';
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
