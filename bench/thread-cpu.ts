/**
 * CPU time of this process's main thread (the gateway's event loop), from /proc: user + system,
 * in ms. Unlike event-loop busy time it does not count time the thread was runnable but waiting
 * for a core, so it stays meaningful on a loaded machine. Linux only; null elsewhere.
 */
import { readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux.

export function mainThreadCpuMs(): number | null {
  return cpuMsOf(`/proc/self/task/${process.pid}/stat`);
}

/** The same for the calling thread (a worker's own, in a worker: the pass-throughs report theirs). */
export function threadCpuMs(): number | null {
  return cpuMsOf('/proc/thread-self/stat');
}

/** The same for a whole process (every thread of it: a child's event loop, its GC and libuv threads), by its pid. */
export function processCpuMs(pid: number): number | null {
  return cpuMsOf(`/proc/${pid}/stat`);
}

function cpuMsOf(statFile: string): number | null {
  try {
    const stat = readFileSync(statFile, 'utf8');
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return null;
  }
}

/**
 * Busy time of the whole machine so far (every core, every process: the gateway, PostgreSQL,
 * Redis, the bench's own threads, the kernel's network work), in ms, from /proc/stat; null off
 * Linux. Per call, beside the gateway thread's own, it shows what the rest of the machine spends.
 */
export function machineBusyMs(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
    // cpu user nice system idle iowait irq softirq steal …, in USER_HZ ticks.
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return (user + nice + system + irq + softirq + steal) * TICK_MS;
  } catch {
    return null;
  }
}
