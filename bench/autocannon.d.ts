/** The slice of autocannon's programmatic API the bench uses (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      /** Called before each request is built; answers the request to send. */
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request | null | undefined | false;
      /** Called with each response; makes autocannon buffer the body. */
      onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void;
    }

    interface Options {
      url: string;
      title?: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      /** Requests in all, instead of a duration. */
      amount?: number;
      /** Milliseconds between autocannon's samples; a run of `amount` requests ends at the first sample after its last answer. */
      sampleInt?: number;
      /** Resolve to the raw result even on a main thread, as in a worker (aggregateResult makes a Result of it). */
      skipAggregateResult?: boolean;
      /** Seconds before a request counts as timed out. */
      timeout?: number;
      pipelining?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      requests?: Request[];
    }

    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p99: number;
    }

    interface Result {
      title?: string;
      url: string;
      connections: number;
      /** Seconds the run actually took. */
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      resets: number;
      '2xx': number;
      statusCodeStats: Record<string, { count: number }>;
      latency: Histogram;
      requests: Histogram & { sent: number };
      throughput: Histogram;
    }

    interface Instance extends EventEmitter, PromiseLike<unknown> {
      /** Emitted for every response: latency in (fractional) milliseconds. */
      on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void): this;
      on(event: string, listener: (...args: any[]) => void): this;
    }
  }

  /**
   * Outside the main thread autocannon acts as one of its own workers and resolves to a raw
   * result (encoded histograms); this turns raw results into a Result.
   */
  function autocannon(options: autocannon.Options): autocannon.Instance;
  namespace autocannon {
    function aggregateResult(results: unknown[], options: Options): Result;
  }
  export = autocannon;
}
