import { setMaxListeners } from 'node:events';
import type { Server } from 'node:http';
import { CallAbort, type CallSignal } from '../../domain/shared/call-signal';

/**
 * Graceful stop of the HTTP side. Counts the requests in flight; once draining, every response
 * carries `Connection: close` (so keep-alive clients and balancers move to another instance),
 * and `whenIdle` resolves when the last request in flight has finished. At the drain deadline
 * `deadline` is aborted: long-running responses (SSE streams) listen to it to end themselves
 * properly (an error event, settled billing) before their connection is cut.
 */
export class HttpDrain {
  private active = 0;
  private draining = false;
  private readonly idle = new Set<() => void>();
  /** A CallAbort, not an AbortController: every stream adds and removes a listener on it. */
  private readonly deadlineAbort = new CallAbort();
  private readonly drainingController = new AbortController();

  constructor(server: Server) {
    // Calls in flight may listen to this: dozens of listeners are normal here, and node's default
    // cap of 10 would print a "possible memory leak" warning under any real load.
    setMaxListeners(0, this.drainingController.signal);
    // Prepended so the header is set before the app writes anything.
    server.prependListener('request', (_req, res) => {
      this.active++;
      if (this.draining) res.setHeader('Connection', 'close');
      res.once('close', () => {
        this.active--;
        if (this.active === 0) for (const resolve of this.idle) resolve();
      });
    });
  }

  /** Aborted when shutdown begins (SIGTERM). */
  get drainingSignal(): AbortSignal {
    return this.drainingController.signal;
  }

  /** Aborted at the drain deadline: whatever still runs must wrap up now. */
  get deadline(): CallSignal {
    return this.deadlineAbort;
  }

  get inFlight(): number {
    return this.active;
  }

  begin(): void {
    this.draining = true;
    this.drainingController.abort(new Error('shutting down'));
  }

  /** Aborts `deadline` (with the reason streams may show). */
  expire(): void {
    this.deadlineAbort.abort(new Error('The server is shutting down.'));
  }

  /** Resolves true when no request is in flight, false if `ms` passed first. */
  whenIdle(ms: number): Promise<boolean> {
    if (this.active === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        this.idle.delete(onIdle);
        resolve(value);
      };
      const onIdle = () => done(true);
      const timer = setTimeout(() => done(false), Math.max(0, ms));
      this.idle.add(onIdle);
    });
  }
}
