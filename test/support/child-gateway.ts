import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { pollUntil } from './poll';

const ROOT = join(__dirname, '..', '..');

export interface ChildGateway {
  proc: ChildProcess;
  url: string;
  output: () => string;
  /** SIGKILL: no shutdown hooks, no draining. */
  kill(): Promise<void>;
  /** SIGTERM: the graceful path. Answers the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `npm start`'s entry point as a child process and waits for /healthz. Jest's globalSetup
 * (test/support/global-setup.ts) has compiled it before any test ran.
 */
export async function startChildGateway(env: Record<string, string | undefined>, port: number): Promise<ChildGateway> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env };
  for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
  const proc = spawn(process.execPath, [join(ROOT, 'dist', 'src', 'main.js')], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const state = await pollUntil(
    async () =>
      proc.exitCode !== null
        ? 'exited'
        : await fetch(`${url}/healthz`).then(
            (r) => (r.ok ? 'healthy' : 'starting'),
            () => 'starting',
          ),
    (s) => s !== 'starting',
    60_000,
    200,
  ).catch(() => 'starting');
  if (state === 'exited') throw new Error(`gateway exited during start:\n${out}`);
  if (state !== 'healthy') throw new Error(`gateway did not become healthy:\n${out}`);
  return {
    proc,
    url,
    output: () => out,
    kill: async () => {
      proc.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      proc.kill('SIGTERM');
      return exited;
    },
  };
}
