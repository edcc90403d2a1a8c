/**
 * A gateway refused at start-up closes what it had opened. Here the refusal is a video route
 * whose call timeout is not shorter than the work lease, found once the database (and Redis, in
 * the second pass) are open. A process that asked for the gateway in-process and caught the
 * refusal then exits by itself, with nothing left running: no database pool's timer keeps it
 * alive (or keeps Jest's worker from exiting).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import { newTestStore } from '../support/test-store';

const ROOT = join(__dirname, '..', '..');

test('a start-up refusal leaves nothing running: the process that caught it exits by itself', async () => {
  // A migrated database of its own (test-store.ts): the refusal comes once it is open.
  const store = await newTestStore('refusal');
  const dir = store.dataDir;
  try {
    const catalog = {
      ...BUILTIN_CATALOG,
      models: BUILTIN_CATALOG.models.map((m) =>
        m.id === 'svc-2.5-preview-text-to-video'
          ? { ...m, route: { provider: 'fal-queue', upstreamModel: 'x/y', baseUrl: 'https://fal.example', timeoutSeconds: 60 } }
          : m,
      ),
    };
    writeFileSync(join(dir, 'models.json'), JSON.stringify(catalog));
    const script = `
      require('reflect-metadata');
      const { loadConfig } = require(${JSON.stringify(join(ROOT, 'dist', 'src', 'config.js'))});
      const { createGateway } = require(${JSON.stringify(join(ROOT, 'dist', 'src', 'gateway.js'))});
      createGateway(loadConfig(process.env)).then(
        () => { console.log('started'); process.exit(3); },
        (err) => console.log('refused: ' + err.message),
      );`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_OPTIONS: '',
      DATA_DIR: dir,
      MODELS_FILE: join(dir, 'models.json'),
      WORK_LEASE_SECONDS: '30',
      LOG_LEVEL: 'error',
      PORT: '0',
    };
    if (store.databaseUrl) env.DATABASE_URL = store.databaseUrl;
    const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const ended = await new Promise<{ code: number | null; hung: boolean }>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve({ code: null, hung: true });
      }, 45_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, hung: false });
      });
    });
    expect(out).toMatch(
      /refused: [\s\S]*WORK_LEASE_SECONDS \(30\) must be longer than the timeoutSeconds of svc-2.5-preview-text-to-video's route fal-queue-0 \(60\)[^\n]*raise it above 60, or unset it/,
    );
    expect(ended).toEqual({ code: 0, hung: false });
  } finally {
    await store.remove();
  }
}, 60_000);
