/**
 * A string a JSON Schema `pattern` accepts, found among a few candidates within a CPU-time
 * budget: the pattern comes from whoever holds a free test key, and a hostile one backtracks for
 * hours. One matcher serves one sample; array items share a schema, so each test runs once.
 */
import { Script, createContext } from 'node:vm';
import { threadCpuMillis } from './thread-cpu';

/** CPU time all `pattern` tests of one sample may take: a hostile pattern backtracks for hours. */
const PATTERN_MILLIS = 50;

/** Runs again after a timeout that found the process stalled rather than the pattern slow. */
const STALL_RETRIES = 2;

/**
 * Run inside a context so that a timeout can stop a regular expression that backtracks. The
 * candidates go in one run: each run with a timeout starts a watchdog, which on a loaded machine
 * took enough of the budget that a later candidate went untried and the same schema sampled
 * differently from one request to the next.
 */
const FIRST_MATCH = new Script('texts.findIndex((t) => re.test(t))');
const patternContext = createContext({ re: /$/, texts: [] as string[] });

export class PatternMatcher {
  private millisLeft = PATTERN_MILLIS;
  /** Pattern → candidates → the first accepted. */
  private readonly results = new Map<string, Map<string, string | undefined>>();

  /** A string the pattern accepts: the preferred value, else a few plain candidates; the preferred one when none is. */
  match(pattern: string, preferred: string, min: number, max: number): string {
    let re: RegExp;
    try {
      re = new RegExp(pattern, 'u');
    } catch {
      return preferred;
    }
    const candidates = [preferred, 'a', 'A', '0', 'aaaa', 'AAAA', '0000', 'example', 'a1', 'A1'];
    return (
      this.firstAccepted(
        pattern,
        re,
        candidates.filter((c) => c.length >= min && c.length <= max),
      ) ?? preferred
    );
  }

  /**
   * The first of `texts` that `re` accepts, within what is left of PATTERN_MILLIS of CPU time;
   * none once that is spent. The budget counts this thread's CPU time, not the wall clock's: a
   * run the timeout stopped while the process was hardly running (the machine busy elsewhere, the
   * thread descheduled) proves nothing about the pattern, so it is run again, at most
   * STALL_RETRIES times. Otherwise one loaded moment would cache "matches nothing" for an
   * ordinary pattern, and the same schema would sample differently from one request to the next.
   */
  private firstAccepted(pattern: string, re: RegExp, texts: string[]): string | undefined {
    let results = this.results.get(pattern);
    if (!results) this.results.set(pattern, (results = new Map<string, string | undefined>()));
    const key = texts.join('\0');
    if (results.has(key)) return results.get(key);
    let accepted: string | undefined;
    Object.assign(patternContext, { re, texts });
    for (let attempt = 0; attempt <= STALL_RETRIES && this.millisLeft > 0 && texts.length > 0; attempt++) {
      const cpuBefore = threadCpuMillis();
      let timedOut = false;
      try {
        accepted = texts[FIRST_MATCH.runInContext(patternContext, { timeout: Math.ceil(this.millisLeft) }) as number];
      } catch {
        timedOut = true;
      }
      this.millisLeft -= threadCpuMillis() - cpuBefore;
      // Stopped with most of the budget's CPU time unspent: the pattern did not use it.
      if (!timedOut || this.millisLeft <= 0) break;
    }
    results.set(key, accepted);
    return accepted;
  }
}
