/**
 * Child-process entry for the fan-out phase's /healthz probe (bench/fanout.ts): GET /healthz every
 * `everyMs`, open loop (a slow answer does not delay the next probe, so a stall is seen by every
 * probe it holds up, not by one), over keep-alive connections. Its own process, so its timing
 * is neither the gateway's event loop nor the clients'.
 *
 *   start → begins probing `url`
 *   ping  → answers this process's clock, for the parent to estimate the offset
 *   take  → the probes finished since the last take: [sent at (Unix ms), latency ms, status]
 *   close → stops and exits
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

export type ProberCommand = { cmd: 'start'; url: string; everyMs: number } | { cmd: 'ping'; t: number } | { cmd: 'take' } | { cmd: 'close' };
export type ProberMessage = { type: 'pong'; t: number; tc: number } | { type: 'samples'; samples: Array<[number, number, number]> };

const now = () => performance.timeOrigin + performance.now();
const agent = new Agent({ keepAlive: true, maxSockets: 32 });
let samples: Array<[number, number, number]> = [];
let timer: NodeJS.Timeout | undefined;

function probe(url: string): void {
  const sent = now();
  const done = (status: number) => samples.push([sent, now() - sent, status]);
  const req = request(url, { agent }, (res) => {
    res.resume();
    res.once('end', () => done(res.statusCode ?? 0));
  });
  req.once('error', () => done(0));
  req.end();
}

process.on('message', (m: ProberCommand) => {
  switch (m.cmd) {
    case 'start':
      timer = setInterval(() => probe(m.url), m.everyMs);
      return;
    case 'ping':
      process.send!({ type: 'pong', t: m.t, tc: now() } satisfies ProberMessage);
      return;
    case 'take':
      process.send!({ type: 'samples', samples } satisfies ProberMessage);
      samples = [];
      return;
    case 'close':
      clearInterval(timer);
      agent.destroy();
      process.exit(0);
  }
});
