/**
 * CallAbort stands in for an AbortController's signal on every request: each scenario runs
 * against both, and what the listeners saw, in what order, must be the same.
 */
import { CallAbort, type CallSignal } from '../../src/domain/shared/call-signal';

interface Pair {
  signal: CallSignal;
  abort(reason?: unknown): void;
}

const real = (): Pair => {
  const c = new AbortController();
  return { signal: c.signal, abort: (reason) => c.abort(reason) };
};
const lite = (): Pair => {
  const a = new CallAbort();
  return { signal: a, abort: (reason) => a.abort(reason) };
};

/** A scenario: what it does to a signal, logging what its listeners see. */
type Scenario = (p: Pair, log: string[]) => void;

const scenarios: Record<string, Scenario> = {
  'listeners run once each, in the order added': (p, log) => {
    p.signal.addEventListener('abort', () => log.push('a'), { once: true });
    p.signal.addEventListener('abort', () => log.push('b'));
    p.abort();
    p.abort();
    log.push(String(p.signal.aborted));
  },
  'a removed listener is not run, the others are': (p, log) => {
    const a = () => log.push('a');
    p.signal.addEventListener('abort', a);
    p.signal.addEventListener('abort', () => log.push('b'));
    p.signal.removeEventListener('abort', a);
    p.abort();
  },
  'a listener added after the abort is never run': (p, log) => {
    p.abort();
    p.signal.addEventListener('abort', () => log.push('late'));
    p.abort();
    log.push(String(p.signal.aborted));
  },
  'the same listener added twice runs once': (p, log) => {
    const a = () => log.push('a');
    p.signal.addEventListener('abort', a);
    p.signal.addEventListener('abort', a);
    p.abort();
  },
  'removing a listener never added changes nothing': (p, log) => {
    p.signal.addEventListener('abort', () => log.push('a'));
    p.signal.removeEventListener('abort', () => log.push('other'));
    p.abort();
  },
  'the reason given is kept and thrown': (p, log) => {
    const reason = new Error('client left');
    p.abort(reason);
    try {
      p.signal.throwIfAborted();
    } catch (err) {
      log.push(err === reason ? 'same reason' : 'other reason');
    }
  },
  'without a reason it is an AbortError': (p, log) => {
    p.signal.throwIfAborted();
    log.push('not thrown before');
    p.abort();
    const reason = p.signal.reason as Error;
    log.push(`${reason instanceof Error} ${reason.name}`);
    try {
      p.signal.throwIfAborted();
    } catch (err) {
      log.push((err as Error).name);
    }
  },
  'a listener that removes another before it runs': (p, log) => {
    const b = () => log.push('b');
    p.signal.addEventListener('abort', () => {
      log.push('a');
      p.signal.removeEventListener('abort', b);
    });
    p.signal.addEventListener('abort', b);
    p.abort();
  },
};

describe('CallAbort behaves as an AbortController signal', () => {
  for (const [name, scenario] of Object.entries(scenarios)) {
    it(name, () => {
      const expected: string[] = [];
      scenario(real(), expected);
      const seen: string[] = [];
      scenario(lite(), seen);
      expect(seen).toEqual(expected);
      expect(seen.length).toBeGreaterThan(0);
    });
  }

  it('runs every listener when one throws, then throws the first error to the caller', () => {
    const a = new CallAbort();
    const seen: string[] = [];
    a.addEventListener('abort', () => {
      throw new Error('first');
    });
    a.addEventListener('abort', () => seen.push('second ran'));
    expect(() => a.abort()).toThrow('first');
    expect(seen).toEqual(['second ran']);
    expect(a.aborted).toBe(true);
  });
});
