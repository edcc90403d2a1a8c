/**
 * CPU time spent by the calling thread alone. `process.cpuUsage()` counts every thread of the
 * process: the garbage collector's, the thread pool's, libvips's and the watchdog that stops a
 * slow pattern, so a busy moment elsewhere in the process read as the pattern's own work.
 */
import { readFileSync } from 'node:fs';

/** Linux reports /proc times in USER_HZ ticks, fixed at 100 a second for user space. */
const MILLIS_PER_TICK = 10;

type ThreadCpuUsage = () => NodeJS.CpuUsage;

/** Node 23.9+ has `process.threadCpuUsage`; Node 20 does not. */
const nodeThreadCpuUsage = (process as { threadCpuUsage?: ThreadCpuUsage }).threadCpuUsage?.bind(process);

function fromProc(): number | undefined {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'latin1');
    // Fields after the command name, which may hold spaces and ends at the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
    return Number.isFinite(ticks) ? ticks * MILLIS_PER_TICK : undefined;
  } catch {
    return undefined;
  }
}

const procWorks = process.platform === 'linux' && fromProc() !== undefined;

/** Milliseconds of CPU this thread has used; the whole process's where the thread's is not readable. */
export function threadCpuMillis(): number {
  const usage = nodeThreadCpuUsage?.() ?? (procWorks ? undefined : process.cpuUsage());
  if (usage) return (usage.user + usage.system) / 1000;
  return fromProc() ?? 0;
}
