/** A redis-server of the test's own on a free port (never the machine's shared one). */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const hasRedisServer = (): boolean => spawnSync('redis-server', ['--version']).status === 0;

export interface OwnRedis {
  url: string;
  start(): void;
  /** SHUTDOWN NOSAVE: the server goes away at once, connections drop. */
  stop(): void;
  cleanup(): void;
}

export function ownRedis(port: number): OwnRedis {
  const dir = mkdtempSync(join(tmpdir(), 'own-redis-'));
  const cli = (...args: string[]) => spawnSync('redis-cli', ['-p', String(port), ...args]);
  const up = () => cli('ping').stdout?.toString().includes('PONG') ?? false;
  const wait = (want: boolean) => {
    const until = Date.now() + 5_000;
    while (up() !== want && Date.now() < until) spawnSync('sleep', ['0.05']);
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    start() {
      execFileSync('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'yes', '--dir', dir, '--logfile', join(dir, 'log'), '--pidfile', join(dir, 'pid')]);
      wait(true);
    },
    stop() {
      cli('shutdown', 'nosave');
      wait(false);
    },
    cleanup() {
      if (up()) cli('shutdown', 'nosave');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
