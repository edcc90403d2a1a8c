/**
 * How fast this machine is while the bench runs, measured the same way every time, so that two
 * runs' figures can be read side by side. This VM's speed swings by a factor of two between
 * sessions, and not evenly: on its slowest stretch so far a CPU-bound loop ran at its usual speed
 * while memory-bound work took twice as long, and the gateway (a large working set: keys,
 * leases, counters, its code) slowed far more than the bare pass-through.
 *
 * - cpuLoopMs: a tight arithmetic loop (the core's speed alone);
 * - memoryMs: a million Map writes over 500,000 string keys (caches and memory);
 * - commitMs (PostgreSQL only): the median of 200 one-row inserts, each its own transaction,
 *   through `pg` on one connection (the disk's flush and a round trip: what a charge committed
 *   before the answer waits for at one connection).
 */
import { Client } from 'pg';
import { findGc } from './fanout-measures';

export interface MachineProbe {
  cpuLoopMs: number;
  memoryMs: number;
  commitMs?: number;
}

const round = (n: number) => Math.round(n * 1000) / 1000;
const elapsedMs = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e6;

function cpuLoopMs(): number {
  const t = process.hrtime.bigint();
  let x = 0;
  for (let i = 0; i < 1e8; i++) x += i % 7;
  // Used, so the loop cannot be dropped.
  if (x < 0) throw new Error('unreachable');
  return elapsedMs(t);
}

function memoryMs(): number {
  const { gc } = findGc();
  gc?.();
  const t = process.hrtime.bigint();
  const map = new Map<string, { n: number }>();
  for (let i = 0; i < 1e6; i++) map.set(`k${i % 500_000}`, { n: i });
  const ms = elapsedMs(t);
  map.clear();
  gc?.();
  return ms;
}

async function commitMs(databaseUrl: string): Promise<number> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // A plain table: a temporary one writes no WAL, so its commits would not wait for the disk.
    await client.query('create table if not exists bench_machine_probe (id bigserial primary key, n int not null)');
    const times: number[] = [];
    for (let i = 0; i < 220; i++) {
      const t = process.hrtime.bigint();
      await client.query({ name: 'machine_probe_insert', text: 'insert into bench_machine_probe (n) values ($1)', values: [i] });
      if (i >= 20) times.push(elapsedMs(t));
    }
    times.sort((a, b) => a - b);
    return times[times.length >> 1];
  } finally {
    await client.query('drop table if exists bench_machine_probe').catch(() => undefined);
    await client.end();
  }
}

export async function probeMachine(databaseUrl?: string): Promise<MachineProbe> {
  const probe: MachineProbe = { cpuLoopMs: round(cpuLoopMs()), memoryMs: round(memoryMs()) };
  if (databaseUrl) probe.commitMs = round(await commitMs(databaseUrl));
  return probe;
}

export function probeText(p: MachineProbe): string {
  return (
    `CPU loop ${p.cpuLoopMs.toFixed(0)} ms, memory-bound ${p.memoryMs.toFixed(0)} ms` +
    (p.commitMs !== undefined ? `, one-row commit ${p.commitMs.toFixed(2)} ms` : '')
  );
}
