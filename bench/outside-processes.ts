/**
 * The outside phase's parties, each a process of its own: the bench's servers (server-process.ts),
 * the gateway as `npm start` runs it, and one autocannon process per load segment (load-process.ts).
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { join, resolve } from 'node:path';
import type { BenchServerOptions } from './bench-server';
import type { LoadJob, PhaseResult } from './phase';

/** The repository root (dist/bench/.. /..): the gateway runs from it, as `npm start` does. */
const ROOT = resolve(__dirname, '..', '..');
/** Node's own flags for the bench's processes, none inherited from the bench's (--expose-gc). */
const NODE_FLAGS = ['--max-semi-space-size=32'];

export interface ChildServer {
  url: string;
  pid: number;
  close(): Promise<void>;
}

/** A process's exit, as a promise that settles once (at once when it has exited already). */
function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((ok) => child.once('exit', (code, signal) => ok({ code, signal })));
}

/** Ends a child: `ask` it to go, then SIGKILL if it has not within `graceMs`; answers how it ended. */
async function ending(child: ChildProcess, ask: () => void, graceMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const exit = exited(child);
  if (child.exitCode === null && child.signalCode === null) ask();
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  const how = await exit;
  clearTimeout(timer);
  return how;
}

export async function startServerProcess(options: BenchServerOptions): Promise<ChildServer> {
  const child = fork(join(__dirname, 'server-process.js'), [JSON.stringify(options)], { execArgv: NODE_FLAGS, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((ok, fail) => {
    child.once('message', (m: { port: number }) => ok(m.port));
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`bench server process exited (code ${code}) before listening`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    close: async () => {
      await ending(child, () => child.send('close'), 3000);
    },
  };
}

/** Runs one load segment in an autocannon process of its own. */
export function runLoadProcess(job: LoadJob): Promise<PhaseResult> {
  return new Promise((ok, fail) => {
    const child = fork(join(__dirname, 'load-process.js'), [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let settled = false;
    child.once('message', (m: { result?: PhaseResult; error?: string }) => {
      settled = true;
      if (m.result) ok(m.result);
      else fail(new Error(`load process: ${m.error}`));
    });
    child.once('error', fail);
    child.once('exit', (code) => settled || fail(new Error(`load process exited with code ${code} before reporting`)));
    child.send(job);
  });
}

/** A port nothing listens on now, for the gateway's PORT (it does not say which port it bound). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  await new Promise((ok) => server.close(ok));
  return port;
}

export interface GatewayProcess {
  url: string;
  pid: number;
  /** SIGTERM, as a deploy stops it: the gateway drains, settles its calls and gives its leases back; throws unless it exits 0. */
  stop(): Promise<void>;
}

/**
 * `node --max-semi-space-size=32 dist/src/main.js`, as `npm start` runs it, with `env` (PATH
 * added) and any extra Node flags (BENCH_PROFILE's). Ready once /healthz answers 200. Its JSON log
 * lines go to `log`; the rest of its stdout is the demo account's banner, secrets and all, and
 * stays unprinted.
 */
export async function startGatewayProcess(env: Record<string, string | undefined>, extraFlags: string[], log: (line: string) => void): Promise<GatewayProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [...NODE_FLAGS, ...extraFlags, join(ROOT, 'dist', 'src', 'main.js')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  createInterface({ input: child.stdout! }).on('line', (line) => line.startsWith('{') && log(`[gateway] ${line}`));
  createInterface({ input: child.stderr! }).on('line', (line) => log(`[gateway stderr] ${line}`));
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the gateway process exited (code ${child.exitCode}) before it was ready`);
    const status = await fetch(`${url}/healthz`).then(
      (res) => res.arrayBuffer().then(() => res.status),
      () => 0,
    );
    if (status === 200) break;
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`the gateway process was not ready within 120 s (last /healthz: ${status || 'no answer'})`);
    }
    await new Promise((ok) => setTimeout(ok, 100));
  }
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      const { code, signal } = await ending(child, () => child.kill('SIGTERM'), 60_000);
      if (code !== 0) throw new Error(`the gateway process did not stop cleanly (code ${code}, signal ${signal})`);
    },
  };
}
