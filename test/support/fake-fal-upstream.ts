/**
 * A fake fal.ai-style queue upstream for the video adapter tests: a real HTTP server on
 * 127.0.0.1 that accepts submits, answers status polls, serves results and the video file
 * itself, takes cancels, records what it received, and can be switched into the failure modes
 * that matter. A running job's status carries logs with a percentage, as fal's `?logs=1` does.
 *
 *   const fal = await startFakeFalUpstream();
 *   fal.setMode({ pollsBeforeDone: 2, outcome: 'failed' });
 *   const provider = new FalQueueVideoProvider({ baseUrl: fal.url, ..., fetchMedia: plainFetchMedia });
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

export interface FakeFalMode {
  /** How the submit answers. */
  submit: 'ok' | 'error-500' | 'malformed-json' | 'content-policy';
  /** How a submitted job ends once `pollsBeforeDone` status calls have said it is still running. */
  outcome:
    | 'completed'
    /** status FAILED with an error message that contains a (token-bearing) URL */
    | 'failed'
    /** COMPLETED, but the result answers 422: the source image URL could not be downloaded */
    | 'result-422'
    /** COMPLETED, but the result has no `video` */
    | 'no-video'
    /** every status call answers 500 */
    | 'status-500'
    /** COMPLETED, but the video file answers 404 */
    | 'media-missing';
  /** Status calls answered IN_QUEUE / IN_PROGRESS before the outcome shows. */
  pollsBeforeDone: number;
  /** How long a submit takes to answer (an upstream slower than the gateway's poll interval). */
  submitDelayMs: number;
}

export interface RecordedFalRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  json?: any;
}

export interface FakeFalUpstream {
  url: string;
  requests: RecordedFalRequest[];
  setMode(mode: Partial<FakeFalMode>): void;
  /**
   * Holds every submit (those waiting and those still to come) until the answered function is
   * called; then they answer as the mode says (after `submitDelayMs`). A gate the test releases,
   * for "X happened while the submission was still unanswered" without racing a delay.
   */
  holdSubmits(): () => void;
  /** How many submits have been answered (any status) so far. */
  submitsAnswered(): number;
  close(): Promise<void>;
}

/** The bytes served as the finished video (an MP4 `ftyp` box header and filler). */
export const FAKE_VIDEO_BYTES = Buffer.concat([Buffer.from('000000186674797069736f6d00000200', 'hex'), Buffer.alloc(64, 1)]);

export async function startFakeFalUpstream(): Promise<FakeFalUpstream> {
  let mode: FakeFalMode = { submit: 'ok', outcome: 'completed', pollsBeforeDone: 1, submitDelayMs: 0 };
  const requests: RecordedFalRequest[] = [];
  const jobs = new Map<string, { model: string; polls: number; outcome: FakeFalMode['outcome']; cancelled: boolean }>();
  let nextId = 1;
  let baseUrl = '';
  let gate: Promise<void> | null = null;
  let answered = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const recorded: RecordedFalRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers };
      try {
        if (raw) recorded.json = JSON.parse(raw);
      } catch {
        // Left undefined.
      }
      requests.push(recorded);
      handle(recorded, req, res);
    });
  });

  function handle(r: RecordedFalRequest, req: IncomingMessage, res: ServerResponse): void {
    const path = r.path.split('?')[0];
    const media = /^\/media\/([^/]+)\.mp4$/.exec(path);
    if (r.method === 'GET' && media) {
      if (jobs.get(media[1])?.outcome === 'media-missing') return sendJson(res, 404, { detail: 'Not found' });
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': FAKE_VIDEO_BYTES.length });
      return void res.end(FAKE_VIDEO_BYTES);
    }
    const status = /^\/(.+)\/requests\/([^/]+)\/status$/.exec(path);
    if (r.method === 'GET' && status) return answerStatus(res, status[1], status[2]);
    const cancel = /^\/(.+)\/requests\/([^/]+)\/cancel$/.exec(path);
    if (r.method === 'PUT' && cancel) return answerCancel(res, cancel[1], cancel[2]);
    const result = /^\/(.+)\/requests\/([^/]+)$/.exec(path);
    if (r.method === 'GET' && result) return answerResult(res, result[2]);
    if (r.method === 'POST') {
      const answer = () => {
        if (mode.submitDelayMs > 0) return void setTimeout(() => answerSubmit(res, r.path.slice(1)), mode.submitDelayMs);
        answerSubmit(res, r.path.slice(1));
      };
      if (gate) return void gate.then(answer);
      return answer();
    }
    req.socket.destroy();
  }

  function answerSubmit(res: ServerResponse, model: string): void {
    answered++;
    if (mode.submit === 'error-500') return sendJson(res, 500, { detail: 'Internal Server Error' });
    if (mode.submit === 'malformed-json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end('{"request_id": ');
    }
    if (mode.submit === 'content-policy') {
      return sendJson(res, 422, { detail: [{ msg: 'The prompt was flagged by the content policy checker.', type: 'content_policy_violation' }] });
    }
    const id = `req-${nextId++}`;
    jobs.set(id, { model, polls: 0, outcome: mode.outcome, cancelled: false });
    const requestUrl = `${baseUrl}/${model}/requests/${id}`;
    sendJson(res, 200, { request_id: id, status_url: `${requestUrl}/status`, response_url: requestUrl, cancel_url: `${requestUrl}/cancel` });
  }

  function answerStatus(res: ServerResponse, model: string, id: string): void {
    const job = jobs.get(id);
    if (!job || job.model !== model) return sendJson(res, 404, { detail: 'Request not found' });
    if (job.outcome === 'status-500') return sendJson(res, 500, { detail: 'Internal Server Error' });
    if (job.cancelled) return sendJson(res, 200, { status: 'FAILED', error: 'Request was cancelled.' });
    job.polls++;
    if (job.polls <= mode.pollsBeforeDone) {
      if (job.polls === 1) return sendJson(res, 200, { status: 'IN_QUEUE', queue_position: 0 });
      const share = Math.min(99, 10 * job.polls);
      return sendJson(res, 200, {
        status: 'IN_PROGRESS',
        logs: [
          { message: 'Loading model', level: 'INFO' },
          { message: `Generating: ${share}%`, level: 'INFO' },
        ],
      });
    }
    if (job.outcome === 'failed') {
      return sendJson(res, 200, {
        status: 'FAILED',
        error: 'Generation crashed on worker; logs at https://internal.example/logs?token=secret-token',
      });
    }
    sendJson(res, 200, { status: 'COMPLETED', response_url: `${baseUrl}/${model}/requests/${id}` });
  }

  /** As fal: a request still running is cancelled (202); a finished one answers 400, an unknown one 404. */
  function answerCancel(res: ServerResponse, model: string, id: string): void {
    const job = jobs.get(id);
    if (!job || job.model !== model) return sendJson(res, 404, { detail: 'Request not found' });
    if (job.cancelled || job.polls > mode.pollsBeforeDone) return sendJson(res, 400, { status: 'ALREADY_COMPLETED' });
    job.cancelled = true;
    sendJson(res, 202, { status: 'CANCELLATION_REQUESTED' });
  }

  function answerResult(res: ServerResponse, id: string): void {
    const job = jobs.get(id);
    if (!job) return sendJson(res, 404, { detail: 'Request not found' });
    if (job.outcome === 'result-422') {
      return sendJson(res, 422, {
        detail: [{ loc: ['body', 'image_url'], msg: 'Failed to download the file from image_url: the URL has expired.', type: 'file_download_error' }],
      });
    }
    if (job.outcome === 'no-video') return sendJson(res, 200, { seed: 1 });
    sendJson(res, 200, { video: { url: `${baseUrl}/media/${id}.mp4`, content_type: 'video/mp4', file_size: FAKE_VIDEO_BYTES.length } });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: baseUrl,
    requests,
    setMode(next) {
      mode = { ...mode, ...next };
    },
    holdSubmits() {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      gate = held;
      return () => {
        if (gate === held) gate = null;
        release();
      };
    },
    submitsAnswered: () => answered,
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A test-only fetchMedia: plain GET, no SSRF checks (the fake lives on loopback). */
export async function plainFetchMedia(url: string): Promise<{ data: Buffer; contentType: string }> {
  const response = await request(url);
  const data = Buffer.from(await response.body.arrayBuffer());
  if (response.statusCode !== 200) throw new Error(`GET ${url} answered ${response.statusCode}`);
  return { data, contentType: String(response.headers['content-type'] ?? 'application/octet-stream') };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
