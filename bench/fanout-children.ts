/**
 * The fan-out phase's child processes (the client processes of bench/fanout-clients.ts and the
 * /healthz prober of bench/healthz-prober.ts): forking and stopping them, their IPC messages, and
 * each one's clock offset from the gateway's.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { now, r3 } from './fanout-types';

/** A child's IPC messages, kept until a waiter takes them (a job may finish before anyone waits). */
export class Inbox<In extends { type: string }, Out> {
  private readonly messages: In[] = [];
  private readonly waiters: Array<{ match: (m: In) => boolean; ok: (m: In) => void }> = [];
  private exit: string | null = null;

  constructor(readonly child: ChildProcess) {
    child.on('message', (m: In) => {
      const i = this.waiters.findIndex((w) => w.match(m));
      if (i >= 0) this.waiters.splice(i, 1)[0].ok(m);
      else this.messages.push(m);
    });
    child.once('exit', (code, signal) => {
      this.exit = `child process exited (code ${code}, signal ${signal})`;
    });
  }

  send(m: Out): void {
    this.child.send(m as object);
  }

  wait<T extends In['type']>(
    type: T,
    timeoutMs: number,
    what: string,
    match: (m: Extract<In, { type: T }>) => boolean = () => true,
  ): Promise<Extract<In, { type: T }>> {
    const fits = (m: In): boolean => m.type === 'fatal' || (m.type === type && match(m as Extract<In, { type: T }>));
    const unwrap = (m: In) => {
      if (m.type === 'fatal') throw new Error(`child process: ${(m as unknown as { error: string }).error}`);
      return m as Extract<In, { type: T }>;
    };
    const queued = this.messages.findIndex(fits);
    if (queued >= 0) return Promise.resolve().then(() => unwrap(this.messages.splice(queued, 1)[0]));
    if (this.exit) return Promise.reject(new Error(`${this.exit} while waiting for ${what}`));
    return new Promise((ok, fail) => {
      const waiter = {
        match: fits,
        ok: (m: In) => {
          clearTimeout(timer);
          this.child.off('exit', onExit);
          try {
            ok(unwrap(m));
          } catch (err) {
            fail(err);
          }
        },
      };
      const drop = () => this.waiters.splice(this.waiters.indexOf(waiter), 1);
      const timer = setTimeout(() => {
        drop();
        this.child.off('exit', onExit);
        fail(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const onExit = () => {
        clearTimeout(timer);
        drop();
        fail(new Error(`child process exited while waiting for ${what}`));
      };
      this.child.once('exit', onExit);
      this.waiters.push(waiter);
    });
  }
}

export type Pingable = Inbox<{ type: 'pong'; t: number; tc: number } | { type: string }, { cmd: 'ping'; t: number }>;

/** The child's clock minus ours, from the ping with the shortest round trip (corrected only when the round trip can tell it from zero). */
export async function clockOffset(inbox: Pingable): Promise<{ offsetMs: number; rttMs: number; corrected: boolean }> {
  let best = { offsetMs: 0, rttMs: Infinity };
  for (let i = 0; i < 30; i++) {
    const t0 = now();
    inbox.send({ cmd: 'ping', t: t0 });
    const pong = (await inbox.wait('pong', 2000, 'a clock ping', (m) => (m as { t: number }).t === t0)) as unknown as { tc: number };
    const t1 = now();
    if (t1 - t0 < best.rttMs) best = { offsetMs: pong.tc - (t0 + t1) / 2, rttMs: t1 - t0 };
  }
  return { offsetMs: r3(best.offsetMs), rttMs: r3(best.rttMs), corrected: Math.abs(best.offsetMs) > best.rttMs / 2 };
}

export async function spawn<In extends { type: string }, Out>(file: string): Promise<Inbox<In, Out>> {
  const child = fork(join(__dirname, file), [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise<void>((ok, fail) => {
    child.once('spawn', ok);
    child.once('error', fail);
  });
  return new Inbox<In, Out>(child);
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((ok) => {
    const t = setTimeout(() => (child.kill('SIGKILL'), ok()), 3000);
    child.once('exit', () => (clearTimeout(t), ok()));
  });
}
