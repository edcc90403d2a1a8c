/**
 * A redis-server of the test's own on a free port (never the machine's shared one).
 *
 * A port found free (freePort) may be taken again before redis-server binds it, by another test
 * file's server among others: a server that failed to bind must not leave the test talking to
 * (and its cleanup shutting down) whatever answers on that port. So start() waits until the
 * server answering on the port is the very process it started (INFO's process_id), and fails
 * loudly otherwise; startOwnRedis() tries other ports when the first is taken; stop() and
 * cleanup() only ever shut down that process.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port';

export const hasRedisServer = (): boolean => spawnSync('redis-server', ['--version']).status === 0;

export interface OwnRedis {
  url: string;
  /** Starts the server; throws when the server answering on the port is not the one started. */
  start(): void;
  /** SHUTDOWN NOSAVE of its own server: it goes away at once, connections drop. */
  stop(): void;
  /** Shuts its own server down if it runs (never another one on the port), removes its files. */
  cleanup(): void;
}

const pause = (seconds: number) => spawnSync('sleep', [String(seconds)]);

/** Whether the process runs (a zombie left unreaped does not). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return true;
  }
}

export function ownRedis(port: number): OwnRedis {
  const dir = mkdtempSync(join(tmpdir(), 'own-redis-'));
  const log = join(dir, 'log');
  const cli = (...args: string[]) => spawnSync('redis-cli', ['-p', String(port), ...args], { timeout: 2_000 });
  /** The pid of the redis-server answering on the port, if any answers. */
  const answering = (): number | undefined => {
    const m = /process_id:(\d+)/.exec(cli('info', 'server').stdout?.toString() ?? '');
    return m ? Number(m[1]) : undefined;
  };
  /** The process this object started last, while it may run. */
  let pid: number | undefined;
  let starts = 0;

  /** Starts a server; answers whether it is the one answering on the port. */
  function tryStart(): boolean {
    // Each start logs to a file of its own: its first line names its pid.
    const logFile = `${log}.${++starts}`;
    execFileSync('redis-server', [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'yes',
      '--dir',
      dir,
      '--logfile',
      logFile,
      '--pidfile',
      join(dir, 'pid'),
    ]);
    const until = Date.now() + 10_000;
    let started: number | undefined;
    while (Date.now() < until) {
      const text = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
      started ??= Number(/pid=(\d+), just started/.exec(text)?.[1]) || undefined;
      if (started !== undefined) {
        pid = started;
        // It could not bind (the port was taken): it has logged so and exited.
        if (/Failed listening on port|Could not create server TCP listening socket/.test(text) || !running(started)) {
          if (running(started)) process.kill(started, 'SIGKILL');
          pid = undefined;
          return false;
        }
        if (answering() === started) return true;
      }
      pause(0.05);
    }
    if (started !== undefined && running(started)) process.kill(started, 'SIGKILL');
    pid = undefined;
    return false;
  }

  /** Until its own server has gone (its pid no longer answers on the port, nor runs). */
  function gone(own: number): void {
    const until = Date.now() + 5_000;
    while (running(own) && Date.now() < until) pause(0.05);
    if (running(own)) process.kill(own, 'SIGKILL');
  }

  function shutDown(): void {
    const own = pid;
    if (own === undefined || !running(own)) {
      pid = undefined;
      return;
    }
    // SHUTDOWN over the port only when the server there is its own; else a signal to its own pid.
    if (answering() === own) cli('shutdown', 'nosave');
    else process.kill(own, 'SIGTERM');
    gone(own);
    pid = undefined;
  }

  const own: OwnRedis & { tryStart(): boolean } = {
    url: `redis://127.0.0.1:${port}`,
    tryStart,
    start() {
      if (tryStart()) return;
      const other = answering();
      throw new Error(
        `own-redis: the redis-server started on port ${port} is not the one answering there (${other ? `pid ${other} answers` : 'nothing answers'}); the port was taken`,
      );
    },
    stop: shutDown,
    cleanup() {
      shutDown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return own;
}

/** An own redis-server, started on a free port; another port when the first was taken meanwhile. */
export async function startOwnRedis(): Promise<OwnRedis> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const server = ownRedis(await freePort()) as OwnRedis & { tryStart(): boolean };
    if (server.tryStart()) return server;
    server.cleanup();
  }
  throw new Error('own-redis: no free port held long enough for redis-server to bind it, 5 times');
}
