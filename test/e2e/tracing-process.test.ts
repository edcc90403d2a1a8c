/**
 * Tracing as a process runs it, from the compiled service: `npm start`'s entry point with
 * OTEL_EXPORTER_OTLP_ENDPOINT writes the trace id into its JSON log lines and sends its spans on
 * SIGTERM; without the variable, a gateway that serves requests has loaded no module of the
 * OpenTelemetry SDK.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import { startChildGateway } from '../support/child-gateway';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import { freePort } from '../support/free-port';
import { parseTraceparent, SPAN_KIND, startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';
import { newTestStore, type TestStore } from '../support/test-store';
import { pollUntil } from '../support/poll';

const ROOT = join(__dirname, '..', '..');
vi.setConfig({ testTimeout: 120_000 });

let otlp: OtlpReceiver;
let upstream: FakeOpenAIUpstream;
let stores: TestStore[] = [];

beforeAll(async () => {
  [otlp, upstream] = await Promise.all([startOtlpReceiver(), startFakeOpenAIUpstream()]);
});
afterAll(async () => {
  await Promise.all([otlp.close(), upstream.close(), ...stores.map((s) => s.remove())]);
  stores = [];
});

async function store(name: string): Promise<TestStore> {
  const s = await newTestStore(name);
  stores.push(s);
  return s;
}

const storeEnv = (s: TestStore) => ({ DATA_DIR: s.dataDir, DATABASE_URL: s.databaseUrl, REDIS_URL: process.env.REDIS_URL });

test('the entry point logs each line inside a request with its trace id, and sends the spans before it exits on SIGTERM', async () => {
  const s = await store('tracemain');
  const catalog = {
    ...BUILTIN_CATALOG,
    models: BUILTIN_CATALOG.models.map((m) =>
      m.id === 'svc-chat-1'
        ? { ...m, route: { id: 'chat-up', provider: 'openai-compatible', upstreamModel: 'up', baseUrl: upstream.url, timeoutSeconds: 5 } }
        : m,
    ),
  };
  writeFileSync(join(s.dataDir, 'models.json'), JSON.stringify(catalog));
  const child = await startChildGateway(
    { ...storeEnv(s), MODELS_FILE: join(s.dataDir, 'models.json'), OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, LOG_LEVEL: 'warn' },
    await freePort(),
  );
  let exit: number | null | undefined;
  try {
    // A fresh data directory: the demo account's live key, printed once, just after the listener opens.
    const printed = await pollUntil(
      async () => child.output(),
      (out) => /live key: +svc_live_\S+/.test(out),
    );
    const live = /live key: +(svc_live_\S+)/.exec(printed)![1];
    upstream.setMode('error-500');
    const res = await fetch(`${child.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${live}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(502);
    await res.text();
  } finally {
    upstream.setMode('ok');
    exit = await child.stop();
  }
  expect(exit).toBe(0);
  const sent = parseTraceparent(upstream.requests.at(-1)!.headers.traceparent)!;
  const lines = child
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  const failed = lines.filter((l) => l.msg === 'upstream attempt failed');
  expect(failed.length).toBeGreaterThan(0);
  for (const line of failed) expect(line.trace_id).toBe(sent.traceId);
  // Lines logged outside any request carry none.
  expect(lines.filter((l) => l.msg === 'shutting down: draining requests and workers').every((l) => l.trace_id === undefined)).toBe(true);
  // Exported on the way out: no wait for the next batch.
  const spans = otlp.spansOf(sent.traceId);
  const server = spans.find((x) => x.kind === SPAN_KIND.server)!;
  expect(server.attributes).toMatchObject({ 'http.response.status_code': 502, 'gen_ai.request.model': 'svc-chat-1' });
  expect(server.status).toBe(2);
  // A 500 is retried on the model's one route: a client span per attempt, one per request the upstream got.
  const attempts = spans.filter((x) => x.kind === SPAN_KIND.client);
  expect(attempts.map((x) => x.attributes['svc.route'])).toEqual(
    upstream.requests.filter((r) => parseTraceparent(r.headers.traceparent)?.traceId === sent.traceId).map(() => 'chat-up'),
  );
  expect(attempts.length).toBeGreaterThan(1);
});

/** Starts a gateway in a child process, serves one call, and answers the OpenTelemetry modules it had loaded by then. */
async function modulesLoaded(env: Record<string, string | undefined>): Promise<string[]> {
  const script = `
    require('reflect-metadata');
    const { loadConfig } = require(${JSON.stringify(join(ROOT, 'dist', 'src', 'config.js'))});
    const { createGateway } = require(${JSON.stringify(join(ROOT, 'dist', 'src', 'gateway.js'))});
    (async () => {
      const gateway = await createGateway(loadConfig(process.env));
      const origin = await gateway.listen();
      const res = await fetch(origin + '/v1/models', { headers: { authorization: 'Bearer svc_live_unknown' } });
      await res.text();
      const loaded = Object.keys(require.cache).filter((k) => k.includes('@opentelemetry'));
      await gateway.close();
      process.stdout.write('MODULES ' + JSON.stringify(loaded.map((k) => k.replace(/^.*node_modules\\//, ''))) + '\\n');
    })().catch((err) => { process.stdout.write('FAILED ' + err.stack + '\\n'); process.exit(1); });`;
  const childEnv: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', PORT: '0', LOG_LEVEL: 'error', ...env };
  for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
  const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise((resolve) => child.once('exit', resolve));
  const line = out.split('\n').find((l) => l.startsWith('MODULES '));
  if (!line) throw new Error(`the child did not report its modules:\n${out}`);
  return JSON.parse(line.slice('MODULES '.length)) as string[];
}

test('without OTEL_EXPORTER_OTLP_ENDPOINT no OpenTelemetry SDK module is loaded; with it, the SDK is', async () => {
  const off = await modulesLoaded({ ...storeEnv(await store('traceoff')), OTEL_EXPORTER_OTLP_ENDPOINT: undefined });
  // prom-client loads the API (a no-op façade without an SDK) for its exemplars, whatever the gateway does.
  expect(off.filter((m) => !m.startsWith('@opentelemetry/api/'))).toEqual([]);
  const on = await modulesLoaded({ ...storeEnv(await store('traceon')), OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url });
  expect(on.some((m) => m.startsWith('@opentelemetry/sdk-node/'))).toBe(true);
});
